// Launching a driver on a cluster that may not answer, the same for every workflow and every cluster
// type: each failed attempt is reported (the caller shows its job UNKNOWN with the cause), the next one
// follows after a growing delay, and past LAUNCH_DEADLINE_MS (checked by the launch activity) the
// launch fails for good with the last cause. A spec that cannot run fails at once, as before.
import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, sleep } from '@temporalio/workflow';
import { relaunchDelayMs } from '../domain/broken-clusters/unreachable';
import { FailureType, type DriverSpec, type DriverStatus } from '../domain/driver';
import { failureMessage } from '../domain/failure';
import type { Job } from '../domain/types';
import { hostAbsentMessage, type DriverHost } from '../domain/hosts';
import { isHostAbsent, onHost } from './activity-options';

export interface LaunchRequest {
  clusterName: string;
  spec: DriverSpec;
  /**
   * The host that owns the driver if it was launched before (a retry, a re-launch after continue-as-new): the
   * launch runs there, so it finds the driver instead of starting another elsewhere. Unset: any worker
   * launches, and a host-bound cluster's launch answers with its host (DriverStatus.host).
   */
  host?: DriverHost;
  /** A job's STARTING record and its version, written by the first attempt. */
  starting?: { job: Job; version: number };
  /** Called after each attempt the cluster did not answer, with the cause and when trying began. */
  unreachable(cause: string, since: number): Promise<void> | void;
  /**
   * Set: each attempt runs to its end even when the caller is cancelled (the request itself rejects at
   * once), and is handed here, so the caller can wait for it before removing the driver: a cancel that
   * comes while the cluster is still creating the driver then leaves no driver behind.
   */
  inFlight?(attempt: Promise<unknown>): void;
}

/** One launch attempt; shielded from cancellation when the caller follows attempts in flight. */
function attempt(r: LaunchRequest, starting: LaunchRequest['starting'], since: number): Promise<DriverStatus> {
  const { launching } = onHost(r.host);
  if (!r.inFlight) return launching.launchDriver(r.clusterName, r.spec, starting, since);
  const call = CancellationScope.nonCancellable(() => launching.launchDriver(r.clusterName, r.spec, starting, since));
  r.inFlight(call.catch(() => undefined));
  return Promise.race([call, CancellationScope.current().cancelRequested]);
}

/** The ApplicationFailure inside an activity's failure, if it is one. */
const applicationFailure = (e: unknown): ApplicationFailure | undefined =>
  e instanceof ApplicationFailure ? e : e instanceof ActivityFailure ? applicationFailure(e.cause) : undefined;

/** A failure retrying cannot help: a spec that cannot run, a cluster that does not exist, time up. */
const isPermanent = (e: unknown): boolean => applicationFailure(e)?.nonRetryable === true;

/** Whether a launch failed because it ran out of time (the try then fails; the job may retry). */
export const isLaunchDeadline = (e: unknown): boolean => applicationFailure(e)?.type === FailureType.LAUNCH_DEADLINE;

export async function launchUntilDeadline(r: LaunchRequest): Promise<{ status: DriverStatus; since: number }> {
  const since = Date.now();
  let starting = r.starting;
  let lastCause: string | undefined;
  for (let failures = 1; ; failures++) {
    try {
      return { status: await attempt(r, starting, since), since };
    } catch (e) {
      if (isCancellation(e)) throw e;
      if (isPermanent(e)) {
        if (isLaunchDeadline(e) && lastCause)
          throw ApplicationFailure.nonRetryable(`${failureMessage(e)}: ${lastCause}`, FailureType.LAUNCH_DEADLINE);
        throw e;
      }
      // A host gone: the driver stays UNKNOWN with that cause until the host's workers are back (no deadline).
      lastCause = r.host && isHostAbsent(e) ? hostAbsentMessage(r.host) : failureMessage(e);
      starting = undefined;
      await r.unreachable(lastCause, since);
      await sleep(relaunchDelayMs(failures));
    }
  }
}
