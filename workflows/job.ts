// Single job workflow `job/<jobId>`: launch the driver through the cluster's adapter, watch it, retry a
// failed try while attempts remain, stop or cancel on request, and clean up after itself.
//
//   SUBMITTED ──▶ STARTING ──▶ BUSY ──▶ FINISHED
//                    │           │
//                    │           └──▶ (try failed) ──attempt ≤ maxRetries──▶ STARTING (attempt + 1)
//                    │                      └──────── otherwise ──────────▶ FAILED
//                    └── stop ──▶ FINISHED      cancel (any time) ──▶ CANCELED
//   Any live state ⇄ UNKNOWN while the cluster cannot be observed.
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { DriverStatus } from '../domain/driver';
import { jobIdFromWorkflowId } from '../domain/ids';
import { newJobRecord, singleJobDriverId, type JobWorkflowInput } from '../domain/job';
import { isTerminal, JobState } from '../domain/states';
import type { Job } from '../domain/types';
import { drivers, projection, watch } from './activities';
import { setSearch } from './search';

export const stopJobUpdate = defineUpdate<void>('stop');
/** Resolves once the SUBMITTED record is in the read model (read-your-writes for the submitting API). */
export const acceptedUpdate = defineUpdate<{ jobId: string }>('accepted');
export const jobQuery = defineQuery<Job>('job');

const { projectJob } = projection;

export async function singleJobWorkflow(input: JobWorkflowInput): Promise<Job> {
  const jobId = jobIdFromWorkflowId(workflowInfo().workflowId);
  const job: Job = input.resume?.job ?? newJobRecord(jobId, input, workflowInfo().runStartTime.getTime());
  let seq = input.resume?.seq ?? 0;
  let projected = input.resume !== undefined;
  let stopRequested = false;

  const project = async () => {
    seq += 1;
    await projectJob({ ...job }, seq);
    projected = true;
    setSearch({ jobState: job.state });
  };

  setHandler(jobQuery, () => job);
  setHandler(acceptedUpdate, async () => {
    await condition(() => projected);
    return { jobId };
  });
  setHandler(
    stopJobUpdate,
    () => {
      stopRequested = true;
    },
    {
      validator: () => {
        if (isTerminal(job.state)) throw new Error(`job ${jobId} is already ${job.state}`);
      },
    },
  );

  const driverId = () => singleJobDriverId(jobId, job.attempt);
  const cluster = job.clusterName;

  try {
    if (!input.resume) {
      setSearch({ jobId, clusterName: cluster, jobType: job.jobType, scheduleId: input.scheduleId, jobState: job.state });
      await project();
    }
    // After continue-as-new the current try goes on: launching again finds its driver.
    let resumed = input.resume !== undefined;
    for (;;) {
      // The launch activity writes STARTING (with the version reserved here) before it launches.
      let starting: { job: Job; version: number } | undefined;
      if (!resumed) {
        job.state = JobState.STARTING;
        seq += 1;
        starting = { job: { ...job }, version: seq };
        setSearch({ jobState: job.state });
      }
      resumed = false;
      let status: DriverStatus;
      try {
        status = await drivers.launchDriver(
          cluster,
          {
            driverId: driverId(),
            role: 'application',
            spark: input.spec,
            env: {},
            labels: { jobId, ...(input.scheduleId ? { scheduleId: input.scheduleId } : {}) },
          },
          starting,
        );
      } catch (e) {
        return await finish(JobState.FAILED, failureMessage(e));
      }

      // Watch this try until it ends, or until stop is requested.
      for (;;) {
        applyStatus(job, status);
        await project();
        if (status.phase === 'SUCCEEDED') {
          await drivers.removeDriver(cluster, driverId());
          return await finish(JobState.FINISHED);
        }
        if (status.phase === 'FAILED' || status.phase === 'MISSING') break;
        if (stopRequested) return await stopNow();
        const scope = new CancellationScope();
        const next = scope.run(() => watch.watchDriver(cluster, driverId(), status));
        await Promise.race([next, condition(() => stopRequested)]);
        if (stopRequested) {
          scope.cancel();
          return await stopNow();
        }
        status = await next;
        if (workflowInfo().continueAsNewSuggested) {
          await condition(allHandlersFinished);
          await continueAsNew<typeof singleJobWorkflow>({ ...input, resume: { job, seq } });
        }
      }

      // This try failed.
      const reason = status.message ?? (status.phase === 'MISSING' ? 'the driver disappeared' : 'the driver failed');
      await drivers.removeDriver(cluster, driverId());
      if (job.attempt > job.maxRetries) return await finish(JobState.FAILED, reason);
      job.error = `attempt ${job.attempt} failed: ${reason}`;
      job.attempt += 1;
      job.appId = undefined;
    }
  } catch (e) {
    if (!isCancellation(e)) throw e;
    // Cancelled (API cancel or an operator in the Temporal UI): remove the driver even mid-launch.
    await CancellationScope.nonCancellable(async () => {
      await drivers.removeDriver(cluster, driverId());
      await finish(JobState.CANCELED, 'cancelled on request');
    });
    throw e;
  }

  async function stopNow(): Promise<Job> {
    await drivers.removeDriver(cluster, driverId());
    return finish(JobState.FINISHED);
  }

  async function finish(state: JobState, error?: string): Promise<Job> {
    job.state = state;
    job.endTime = Date.now();
    if (error !== undefined) job.error = error;
    else delete job.error;
    await project();
    return job;
  }
}

function applyStatus(job: Job, st: DriverStatus): void {
  if (st.appId) job.appId = st.appId;
  switch (st.phase) {
    case 'PENDING':
      job.state = JobState.STARTING;
      break;
    case 'RUNNING':
      job.state = JobState.BUSY;
      job.startTime ??= st.startTime ?? Date.now();
      break;
    case 'UNKNOWN':
      job.state = JobState.UNKNOWN;
      break;
    default:
      break;
  }
}

function failureMessage(e: unknown): string {
  if (e instanceof ApplicationFailure) return e.message;
  const cause = (e as { cause?: unknown }).cause;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return e instanceof Error ? e.message : String(e);
}
