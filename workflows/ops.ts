// Short workflows the API runs for work that needs the worker's host or the read model's one writer:
// reading driver logs (local drivers' logs live on the worker host) and deleting a finished job.
import { short } from './activity-options';
import type { LogRange } from '../domain/driver';
import type { JobLogEntry } from '../domain/types';

export async function driverLogsWorkflow(
  clusterName: string,
  driverIds: string[],
  range: LogRange,
): Promise<JobLogEntry[]> {
  return short.driverLogs(clusterName, driverIds, range);
}

export async function deleteJobWorkflow(jobId: string, clusterName: string, driverIds: string[]): Promise<void> {
  for (const id of driverIds) await short.removeDriver(clusterName, id);
  await short.deleteJobRecord(jobId);
}

export async function deleteGroupWorkflow(groupId: string): Promise<void> {
  await short.deleteGroupRecords(groupId);
}
