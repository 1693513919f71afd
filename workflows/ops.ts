// Short workflows the API runs for work that needs the worker's host or the read model's one writer:
// reading driver logs (local drivers' logs live on the worker host) and deleting a finished job.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { LogRange } from '../activities/adapters/types';
import type { JobLogEntry } from '../domain/types';

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['ClusterNotFound'] },
});

export async function driverLogsWorkflow(clusterName: string, driverIds: string[], range: LogRange): Promise<JobLogEntry[]> {
  return acts.driverLogs(clusterName, driverIds, range);
}

export async function deleteJobWorkflow(jobId: string, clusterName: string, driverIds: string[]): Promise<void> {
  for (const id of driverIds) await acts.removeDriver(clusterName, id);
  await acts.deleteJobRecord(jobId);
}

export async function deleteGroupWorkflow(groupId: string): Promise<void> {
  await acts.deleteGroupRecords(groupId);
}
