// Workflow `cleanup/job/<jobId>`: removes the drivers an ended job could not remove because their cluster
// did not answer, retrying with backoff until it does, then clears the job's `cleanup` note. The job's
// workflow starts it and ends at once, so nothing (a schedule's next run, say) waits on a broken cluster.
import { defineSignal, setHandler } from '@temporalio/workflow';
import type { Job } from '../domain/types';
import type { DriverHost } from '../domain/hosts';
import { onHost, projection } from './activity-options';

/** Sent by DELETE /job: the record is gone, write it no more (removing goes on). */
export const jobDeletedSignal = defineSignal('deleted');

export const driverCleanupWorkflowId = (jobId: string): string => `cleanup/job/${jobId}`;

export interface DriverCleanupInput {
  clusterName: string;
  driverIds: string[];
  /** The job's last record (with its `cleanup` note), and a version above every one its workflow wrote. */
  job: Job;
  version: number;
  /** The job was deleted before the hand-over: write nothing. */
  deleted?: boolean;
  /** The worker host that owns the drivers (local clusters): removed there, once it answers. */
  host?: DriverHost;
}

export async function driverCleanupWorkflow(input: DriverCleanupInput): Promise<void> {
  let deleted = input.deleted === true;
  setHandler(jobDeletedSignal, () => {
    deleted = true;
  });
  // Retried until the cluster answers (a deleted cluster leaves nothing to remove: removeDriver returns).
  const { cleanup } = onHost(input.host);
  await Promise.all(input.driverIds.map((id) => cleanup.removeDriver(input.clusterName, id)));
  if (deleted) return;
  const { cleanup: _done, ...job } = input.job;
  await projection.projectJob(job, input.version);
}
