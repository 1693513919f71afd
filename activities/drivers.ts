// Activities that drive Spark drivers through the adapter of the job's cluster.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { launchDeadlineError, pastDeadline } from '../domain/broken-clusters/unreachable';
import {
  DriverPhase,
  FailureType,
  InvalidSpecError,
  type DriverSpec,
  type DriverStatus,
  type LogRange,
} from '../domain/driver';
import type { DriverHost } from '../domain/hosts';
import { busyOnceRunning, finishedOnSuccess } from '../domain/job-transitions';
import type { Job, JobLogEntry } from '../domain/types';
import type { Config } from '../lib/config';
import type { AdapterLookup } from './adapters/registry';
import { heartbeating } from './heartbeat';
import type { createProjection } from './projection';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** How stale the cluster document a watch polls through may be: a change of it reaches running watches this fast. */
export const ADAPTER_MAX_AGE_MS = 2_000;

const launchDeadlineFailure = (deadlineMs: number) =>
  ApplicationFailure.nonRetryable(launchDeadlineError(deadlineMs), FailureType.LAUNCH_DEADLINE);

/** A driver that is not running yet (pending, or on a cluster that does not answer). */
const notStarted = (st: DriverStatus): boolean => st.phase === DriverPhase.PENDING || st.phase === DriverPhase.UNKNOWN;

/** `work`, or `expired()` thrown once `ms` have passed first. */
async function withinDeadline<T>(work: Promise<T>, ms: number, expired: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(expired()), Math.max(0, ms));
  });
  // Past the deadline the launch may still end; its outcome is no longer anyone's concern.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function createDriverActivities(
  config: Config,
  adapterFor: AdapterLookup,
  projection: Pick<ReturnType<typeof createProjection>, 'projectJob' | 'projectStarting'>,
) {
  /** Where this worker's host-bound drivers live: later activities on them go to its host's task queue. */
  const thisHost: DriverHost = { id: config.WORKER_HOST, absentMs: config.HOST_ABSENT_MS };
  /** The cluster's adapter as of at most ADAPTER_MAX_AGE_MS ago (one read of the cluster per interval, not per poll). */
  const watchedAdapter = (clusterName: string) => adapterFor(clusterName, { maxAgeMs: ADAPTER_MAX_AGE_MS });

  /**
   * Polls the driver until its phase differs from `known` (or its appId appears), heartbeating, and returns the
   * new status; the unchanged status after `maxWaitMs`. `startingSince`: see watchDriver.
   */
  async function watchWith(
    clusterName: string,
    driverId: string,
    known: DriverStatus,
    maxWaitMs: number,
    startingSince?: number,
  ): Promise<DriverStatus> {
    const ctx = Context.current();
    const deadline = Date.now() + maxWaitMs;
    for (;;) {
      // Asked on every poll: a cluster whose URL or credentials changed is watched through its new connection.
      const st = await (await watchedAdapter(clusterName)).status(driverId);
      if (
        startingSince !== undefined &&
        notStarted(st) &&
        pastDeadline(startingSince, config.LAUNCH_DEADLINE_MS, Date.now())
      )
        return { phase: DriverPhase.FAILED, message: launchDeadlineError(config.LAUNCH_DEADLINE_MS, st.message) };
      if (st.phase !== known.phase || (st.appId && st.appId !== known.appId) || Date.now() > deadline) return st;
      ctx.heartbeat(st.phase);
      await sleep(config.WATCH_INTERVAL_MS, ctx.cancellationSignal);
      if (ctx.cancellationSignal.aborted) return st;
    }
  }

  const activities = {
    /**
     * Launches a driver. `starting` is the job's STARTING record with a version the workflow reserved
     * for it: writing it here, through the same versioned projection, saves the workflow a round of
     * its own before the launch. `since`: when the workflow began trying to launch this driver; past
     * LAUNCH_DEADLINE_MS from then the launch fails for good (FailureType.LAUNCH_DEADLINE), whatever
     * the cluster type.
     */
    async launchDriver(
      clusterName: string,
      spec: DriverSpec,
      starting?: { job: Job; version: number },
      since?: number,
    ): Promise<DriverStatus> {
      const deadline = config.LAUNCH_DEADLINE_MS;
      if (since !== undefined && pastDeadline(since, deadline, Date.now())) throw launchDeadlineFailure(deadline);
      const [adapter] = await Promise.all([
        adapterFor(clusterName),
        starting && projection.projectStarting(starting.job, starting.version),
      ]);
      // Runners connect back to the Temporal server this worker uses.
      const full: DriverSpec =
        spec.role === 'runner'
          ? {
              ...spec,
              env: {
                TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
                TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE,
                ...spec.env,
              },
            }
          : spec;
      try {
        const launched = adapter.launch(full).then((st) => (adapter.hostBound ? { ...st, host: thisHost } : st));
        // Heartbeats stop when the activity ends, past the deadline too, even if the cluster never answers.
        return await heartbeating(
          since === undefined
            ? launched
            : withinDeadline(launched, since + deadline - Date.now(), () => launchDeadlineFailure(deadline)),
        );
      } catch (e) {
        if (e instanceof InvalidSpecError) throw ApplicationFailure.nonRetryable(e.message, FailureType.INVALID_SPEC);
        throw e;
      }
    },

    /**
     * Polls the driver until its phase differs from `known` (or its appId appears), heartbeating, and
     * returns the new status. Returns the unchanged status after `maxWaitMs` so histories stay bounded.
     * `startingSince`: the driver has not run yet, and began launching then; one still not running
     * LAUNCH_DEADLINE_MS later is reported FAILED (the try fails like any other).
     */
    async watchDriver(
      clusterName: string,
      driverId: string,
      known: DriverStatus,
      maxWaitMs = 10 * 60_000,
      startingSince?: number,
    ): Promise<DriverStatus> {
      return watchWith(clusterName, driverId, known, maxWaitMs, startingSince);
    },

    async removeDriver(clusterName: string, driverId: string): Promise<void> {
      const adapter = await adapterFor(clusterName).catch((e) => {
        // A deleted cluster leaves nothing we can remove.
        if (e instanceof ApplicationFailure && e.type === FailureType.CLUSTER_NOT_FOUND) return undefined;
        throw e;
      });
      if (adapter) await heartbeating(adapter.remove(driverId));
    },

    async driverLogs(clusterName: string, driverIds: string[], range: LogRange): Promise<JobLogEntry[]> {
      const adapter = await adapterFor(clusterName);
      const all = await Promise.all(driverIds.map((id) => adapter.logs(id, range)));
      return all.flat();
    },
  };

  return {
    ...activities,

    /**
     * watchDriver for a single job, writing its records on the way so the workflow spends no task of its own
     * on them. `record`: the job as the workflow holds it, and a version it reserved.
     * - A job still STARTING: the first time the driver is seen RUNNING, this writes the BUSY record (with
     *   that version) and watches on.
     * - `finishVersion` set (as the job workflow does): a driver that SUCCEEDED ends the job
     *   here: the FINISHED record is written with that version and the driver removed (`removalError` says
     *   why it was not; the workflow then goes on removing it in the background).
     * Returns the status that ended the watch, and the records it wrote.
     */
    async watchJobDriver(
      clusterName: string,
      driverId: string,
      known: DriverStatus,
      startingSince: number | undefined,
      record: { job: Job; version: number },
      maxWaitMs = 10 * 60_000,
      finishVersion?: number,
    ): Promise<{ status: DriverStatus; busy?: Job; finished?: Job; removalError?: string }> {
      const deadline = Date.now() + maxWaitMs;
      const signal = Context.current().cancellationSignal;
      let job = record.job;
      let busy: Job | undefined;
      let status = await watchWith(clusterName, driverId, known, maxWaitMs, startingSince);
      const seenRunning = signal.aborted ? undefined : busyOnceRunning(job, status, Date.now());
      if (seenRunning) {
        busy = job = seenRunning;
        await projection.projectJob(busy, record.version);
        status = await watchWith(clusterName, driverId, status, Math.max(0, deadline - Date.now()));
      }
      if (finishVersion === undefined || signal.aborted) return { status, busy };
      const finished = finishedOnSuccess(job, status, Date.now());
      if (!finished) return { status, busy };
      await projection.projectJob(finished, finishVersion);
      try {
        await (await adapterFor(clusterName)).remove(driverId);
        return { status, busy, finished };
      } catch (e) {
        return { status, busy, finished, removalError: (e as Error).message };
      }
    },
  };
}
