// Single job workflow `job/<jobId>`: launch the driver through the cluster's adapter, watch it, retry a
// failed try while attempts remain, stop or cancel on request, and clean up after itself.
//
//   SUBMITTED ──▶ STARTING ──▶ BUSY ──▶ FINISHED
//                    │           │
//                    │           └──▶ (try failed) ──attempt ≤ maxRetries──▶ STARTING (attempt + 1)
//                    │                      └──────── otherwise ──────────▶ FAILED
//                    └── stop ──▶ FINISHED      cancel (any time) ──▶ CANCELED
//   Any live state ⇄ UNKNOWN while the cluster cannot be observed (`error` says why and since when).
//   STARTING or UNKNOWN past LAUNCH_DEADLINE_MS without the driver running: the try fails.
//   Stop and cancel take effect at once; a driver not removed yet shows in `cleanup` until it is.
//
// The messages are defined here (the API uses them by these names); the steps are in JobRun (job-run.ts).
import {
  CancellationScope,
  defineQuery,
  defineUpdate,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { jobIdFromWorkflowId } from '../domain/ids';
import type { JobWorkflowInput } from '../domain/job';
import { checkStoppable } from '../domain/job-transitions';
import type { Job } from '../domain/types';
import { jobDeletedSignal } from './driver-cleanup';
import { JobRun } from './job-run';

export const stopJobUpdate = defineUpdate<void>('stop');
/** Resolves once the SUBMITTED record is in the read model (read-your-writes for the submitting API). */
export const acceptedUpdate = defineUpdate<{ jobId: string }>('accepted');
export const jobQuery = defineQuery<Job>('job');
/** Sent by DELETE /job once the job has ended: write no more records (a pending driver removal goes on). */
export { jobDeletedSignal };

export async function singleJobWorkflow(input: JobWorkflowInput): Promise<Job> {
  const run = new JobRun(input, jobIdFromWorkflowId(workflowInfo().workflowId));
  setHandler(jobQuery, () => run.job);
  setHandler(acceptedUpdate, () => run.accepted());
  setHandler(stopJobUpdate, () => run.requestStop(), { validator: () => checkStoppable(run.job) });
  setHandler(jobDeletedSignal, () => run.forget());
  try {
    const job = await run.run();
    // A driver its cluster would not let go of yet: the job has ended, its removal goes on elsewhere.
    await run.handOverCleanup();
    return job;
  } catch (e) {
    if (!isCancellation(e)) throw e;
    // Cancelled (API cancel or an operator in the Temporal UI): CANCELED at once, the driver goes after.
    await CancellationScope.nonCancellable(() => run.cancelled());
    throw e;
  }
}
