// Removing a driver, the same for jobs, groups and SQL engines: a quick try first, and if the cluster
// does not answer, removal goes on in the background until it does, so nothing waits on a broken cluster.
// The callers say what a driver left behind means for them (a job notes it in its `cleanup`, a group
// waits for its removals before it ends, an SQL engine just goes on).
import { CancellationScope, isCancellation, log } from '@temporalio/workflow';
import { failureMessage } from '../domain/failure';
import type { DriverHost } from '../domain/hosts';
import { onHost } from './activity-options';

/** What the caller does while and after a driver is removed in the background. */
export interface Leftover {
  /** The quick try failed with `cause` and the background removal has begun (a job notes it on its record). */
  noted?(cause: string): Promise<void> | void;
  /** The background removal ended (the driver is gone, or removal was given up and logged). */
  ended?(): Promise<void> | void;
}

export interface BackgroundRemoval extends Pick<Leftover, 'ended'> {
  /** Option set of the removal (activity-options.ts): `cleanup` (tries until the cluster answers, backing off to 5 min). */
  via?: 'cleanup' | 'drivers';
  /** The host that owns the driver (domain/hosts.ts): the removal runs there, waiting for it if it is gone. */
  host?: DriverHost;
  /**
   * Run it, and `ended`, shielded from the workflow's cancellation (the default: a cancelled job still removes
   * its drivers). A group's removals run in its own scope, as they always did.
   */
  shielded?: boolean;
}

/**
 * Removes a driver in the background and never rejects: a removal given up (say, the cluster was deleted)
 * is logged. Its activity is scheduled at once, in the caller's step; `ended` runs when it is over.
 */
export function removeInBackground(clusterName: string, driverId: string, o: BackgroundRemoval = {}): Promise<void> {
  const via = onHost(o.host)[o.via ?? 'cleanup'];
  const run = async (): Promise<void> => {
    await via
      .removeDriver(clusterName, driverId)
      .catch((e: unknown) => log.warn('driver removal given up', { driverId, error: failureMessage(e) }));
    if (o.ended) await o.ended();
  };
  return o.shielded === false ? run() : CancellationScope.nonCancellable(run);
}

/**
 * Removes a driver quickly (`quickRemoval`: two tries within a minute); if its cluster does not answer, the
 * removal goes on in the background (shielded, `cleanup`) and `leftover.noted` is told why. Rejects only when
 * the caller is cancelled during the quick try.
 */
export async function removeDriver(
  clusterName: string,
  driverId: string,
  leftover: Leftover = {},
  host?: DriverHost,
): Promise<void> {
  try {
    await onHost(host).quickRemoval.removeDriver(clusterName, driverId);
  } catch (e) {
    if (isCancellation(e)) throw e;
    const cause = failureMessage(e);
    log.warn('driver removal goes on in the background', { driverId, error: cause });
    void removeInBackground(clusterName, driverId, { ended: leftover.ended, host });
    if (leftover.noted) await leftover.noted(cause);
  }
}
