// How a single job's record moves between states (the diagram in workflows/job.ts). Pure functions that
// return a new record; the job workflow decides when to call them and writes what they return.
import { unreachableError } from './broken-clusters/unreachable';
import type { DriverStatus } from './driver';
import { isTerminal, JobState, TERMINAL_JOB_STATES } from './states';
import type { Job } from './types';

/** Error of a job cancelled through the API or by an operator. */
export const CANCELED_MESSAGE = 'cancelled on request';

/** A new try is about to launch. */
export const startingJob = (job: Job): Job => ({ ...job, state: JobState.STARTING });

/**
 * The job as its driver's status shows it: PENDING is STARTING, RUNNING is BUSY (the first start time is
 * kept), UNKNOWN while the cluster cannot be asked. Ended phases leave the state alone: whether the job
 * ends or retries is decided by {@link afterFailedTry} or {@link finishedJob}.
 */
export function withDriverStatus(job: Job, st: DriverStatus, now: number): Job {
  const next: Job = st.appId ? { ...job, appId: st.appId } : { ...job };
  if (st.phase === 'PENDING') next.state = JobState.STARTING;
  else if (st.phase === 'RUNNING') {
    next.state = JobState.BUSY;
    next.startTime ??= st.startTime ?? now;
  } else if (st.phase === 'UNKNOWN') next.state = JobState.UNKNOWN;
  // A driver that had already ended when first seen (launched at submit, then quick): it did run.
  else if ((st.phase === 'SUCCEEDED' || st.phase === 'FAILED') && st.startTime !== undefined)
    next.startTime ??= st.startTime;
  return next;
}

/** What a driver status means for the current try. */
export function tryOutcome(st: DriverStatus): 'succeeded' | 'failed' | 'live' {
  if (st.phase === 'SUCCEEDED') return 'succeeded';
  if (st.phase === 'FAILED' || st.phase === 'MISSING') return 'failed';
  return 'live';
}

/** Why a try failed, in words for the job's `error`. */
export const failedTryReason = (st: DriverStatus): string =>
  st.message ?? (st.phase === 'MISSING' ? 'the driver disappeared' : 'the driver failed');

/**
 * After a failed try: another attempt while `attempt ≤ maxRetries` (the record notes the failure and
 * forgets the old appId), otherwise the job fails with the reason.
 */
export function afterFailedTry(job: Job, reason: string, now: number): { retry: boolean; job: Job } {
  if (job.attempt > job.maxRetries) return { retry: false, job: finishedJob(job, JobState.FAILED, now, reason) };
  const next: Job = { ...job, error: `attempt ${job.attempt} failed: ${reason}`, attempt: job.attempt + 1 };
  delete next.appId;
  return { retry: true, job: next };
}

/**
 * What the watch activity writes on the way (activities/drivers.ts, watchJobDriver): the BUSY record the
 * first time a STARTING job's driver is seen running, else nothing.
 */
export const busyOnceRunning = (job: Job, st: DriverStatus, now: number): Job | undefined =>
  st.phase === 'RUNNING' && job.state === JobState.STARTING ? withDriverStatus(job, st, now) : undefined;

/** The FINISHED record the watch activity writes (then removes the driver) when the driver succeeded, else nothing. */
export const finishedOnSuccess = (job: Job, st: DriverStatus, now: number): Job | undefined =>
  st.phase === 'SUCCEEDED' ? finishedJob(withDriverStatus(job, st, now), JobState.FINISHED, now) : undefined;

/** The job in a terminal state; `error` is set when given and cleared otherwise. */
export function finishedJob(job: Job, state: JobState, now: number, error?: string): Job {
  const next: Job = { ...job, state, endTime: now };
  if (error !== undefined) next.error = error;
  else delete next.error;
  return next;
}

/** Throws (an update validator's rejection) when the job cannot be stopped. */
export function checkStoppable(job: Job): void {
  if (isTerminal(job.state)) throw new Error(`job ${job.jobId} is already ${job.state}`);
}

/** Since when a job's (or instance's) cluster has not answered, and the error it showed before. */
export interface Unreachable {
  since: number;
  errorBefore?: string;
}

/**
 * The record as its cluster's reachability shows it: while `cause` is set the job is UNKNOWN with the
 * cause and since when in `error`; once the cluster answers again (`cause` undefined) the error it had
 * before comes back, and the caller sets the real state from the driver's status.
 */
export function withReachability(
  job: Job,
  cause: string | undefined,
  now: number,
  prev?: Unreachable,
): { job: Job; unreachable?: Unreachable } {
  if (cause !== undefined) {
    const u = prev ?? { since: now, ...(job.error !== undefined ? { errorBefore: job.error } : {}) };
    return { job: { ...job, state: JobState.UNKNOWN, error: unreachableError(cause, u.since) }, unreachable: u };
  }
  if (!prev) return { job };
  const next = { ...job };
  if (prev.errorBefore !== undefined) next.error = prev.errorBefore;
  else delete next.error;
  return { job: next };
}

/** The `cleanup` field of a job whose drivers (ids → cause) could not be removed yet; undefined when none. */
export const cleanupNote = (leftovers: ReadonlyMap<string, string>): string | undefined =>
  leftovers.size === 0
    ? undefined
    : [...leftovers]
        .map(([id, cause]) => `driver ${id} not removed yet (${cause}); retrying in the background`)
        .join('; ');

/**
 * The read model's rule for a job's end: an ended job does not change state again. A write of an end replaces
 * the stored record only while that record has not ended, or ended the same way (the same end written again,
 * e.g. with a cleanup note, goes through). Writes of other states are ordered by their versions alone.
 */
export const endReplaces = (stored: JobState | undefined, next: JobState): boolean =>
  !isTerminal(next) || stored === undefined || !isTerminal(stored) || stored === next;

/** {@link endReplaces} as the condition of a MongoDB write of the end `next`. */
export const endReplacesFilter = (next: JobState) => ({
  $or: [{ state: { $nin: [...TERMINAL_JOB_STATES] } }, { state: next }],
});
