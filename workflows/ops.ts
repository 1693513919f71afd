// Short workflows the API runs for work that needs the worker's host or the read model's one writer:
// reading driver logs (local drivers' logs live on the worker host) and deleting a finished job.
import { ApplicationFailure, getExternalWorkflowHandle } from '@temporalio/workflow';
import { HOST_ABSENT, hostAbsentMessage, type DriverHost } from '../domain/hosts';
import { jobWorkflowId } from '../domain/ids';
import { isHostAbsent, onHost, short } from './activity-options';
import { driverCleanupWorkflowId, jobDeletedSignal } from './driver-cleanup';

import type { LogRange } from '../domain/driver';
import type { JobLogEntry } from '../domain/types';

/** `host`: the worker host that owns the drivers (local clusters; domain/hosts.ts), whose workers read them. */
export async function driverLogsWorkflow(
  clusterName: string,
  driverIds: string[],
  range: LogRange,
  host?: DriverHost,
): Promise<JobLogEntry[]> {
  try {
    return await onHost(host).short.driverLogs(clusterName, driverIds, range);
  } catch (e) {
    throw hostAbsentFailure(e, host);
  }
}

/** A host with no worker as a failure the API answers 503 with; any other failure as it is. */
const hostAbsentFailure = (e: unknown, host: DriverHost | undefined): unknown =>
  host && isHostAbsent(e) ? ApplicationFailure.nonRetryable(hostAbsentMessage(host), HOST_ABSENT) : e;

/**
 * Deletes an ended job. A job whose workflow still runs is removing a driver its cluster would not let go
 * of yet (`cleanup`): it is told to write no more records and goes on removing, so a removal that fails
 * here does not keep the job.
 */
export async function deleteJobWorkflow(
  jobId: string,
  clusterName: string,
  driverIds: string[],
  host?: DriverHost,
): Promise<void> {
  // Both the job's workflow (ending) and its cleanup workflow may still be running; either removes the drivers.
  const told = (workflowId: string) =>
    getExternalWorkflowHandle(workflowId)
      .signal(jobDeletedSignal)
      .then(
        () => true,
        () => false,
      );
  const stillCleaning = (await Promise.all([told(jobWorkflowId(jobId)), told(driverCleanupWorkflowId(jobId))])).some(
    Boolean,
  );
  for (const id of driverIds) {
    try {
      await onHost(host).short.removeDriver(clusterName, id);
    } catch (e) {
      if (!stillCleaning) throw hostAbsentFailure(e, host);
    }
  }
  await short.deleteJobRecord(jobId);
}

export async function deleteGroupWorkflow(groupId: string): Promise<void> {
  await short.deleteGroupRecords(groupId);
}
