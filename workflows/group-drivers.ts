// The drivers of a group's instances, as the group workflow sees them: launches, watches and removals
// run in the background and report what they learn as events, which the workflow's loop alone handles.
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { DriverSpec, DriverStatus } from '../domain/driver';
import { failureMessage } from '../domain/failure';
import { instanceDriverId } from '../domain/group';
import { hostAbsentMessage, type DriverHost } from '../domain/hosts';
import { isHostAbsent, onHost } from './activity-options';
import { removeInBackground } from './driver-removal';
import { launchUntilDeadline } from './launch';

export interface DriverEvent {
  jobId: string;
  st: DriverStatus;
}

export class InstanceDrivers {
  /** Statuses learnt since the loop last looked, in arrival order. */
  readonly events: DriverEvent[] = [];
  private readonly watchers = new Map<string, CancellationScope>();
  private removals = 0;
  private readonly launching = new Set<string>();
  /** When each driver's launch began: one still pending LAUNCH_DEADLINE_MS later is reported FAILED. */
  private readonly launchedAt = new Map<string, number>();

  /** `changed` wakes the workflow's loop. */
  constructor(
    private readonly clusterName: string,
    private readonly changed: () => void,
  ) {}

  /**
   * Launches (or, being idempotent, finds) an instance's driver; its status arrives as an event. While the
   * cluster does not answer, each failed attempt arrives as an UNKNOWN status with the cause.
   */
  launch(jobId: string, spec: DriverSpec, host: DriverHost | undefined): void {
    this.launching.add(jobId);
    void launchUntilDeadline({
      clusterName: this.clusterName,
      spec,
      host,
      unreachable: (message) => {
        this.events.push({ jobId, st: { phase: 'UNKNOWN', message } });
        this.changed();
      },
    })
      .then(
        ({ status: st, since }) => {
          this.launchedAt.set(jobId, since);
          this.launched(jobId, st);
        },
        (err: unknown) => this.launched(jobId, { phase: 'FAILED', message: `launch failed: ${failureMessage(err)}` }),
      )
      .finally(this.changed);
  }

  /** The launch's outcome and the end of its launching, in one step, so the loop never sees one without the other. */
  private launched(jobId: string, st: DriverStatus): void {
    this.launching.delete(jobId);
    this.events.push({ jobId, st });
  }

  /** A launch still trying (nothing to watch yet). */
  isLaunching(jobId: string): boolean {
    return this.launching.has(jobId);
  }

  isWatched(jobId: string): boolean {
    return this.watchers.has(jobId);
  }

  /**
   * Watches a driver until its status differs from `known`; the new status arrives as an event. A driver
   * not yet `started` (its runner not ready) that stays pending past the launch deadline comes back FAILED.
   */
  watch(jobId: string, known: DriverStatus, started: boolean, host: DriverHost | undefined): void {
    const scope = new CancellationScope();
    this.watchers.set(jobId, scope);
    const since = started ? undefined : this.launchedAt.get(jobId);
    const { watch } = onHost(host);
    void scope
      .run(() => watch.watchDriver(this.clusterName, instanceDriverId(jobId), known, undefined, since))
      .then(
        (st) => this.events.push({ jobId, st }),
        (err: unknown) => {
          if (isCancellation(err)) return;
          // A host gone: UNKNOWN with that cause, and watched again (on its host) by the loop.
          const message = host && isHostAbsent(err) ? hostAbsentMessage(host) : failureMessage(err);
          this.events.push({ jobId, st: { phase: 'UNKNOWN', message } });
        },
      )
      .finally(() => {
        if (this.watchers.get(jobId) === scope) this.watchers.delete(jobId);
        this.changed();
      });
  }

  unwatch(jobId: string): void {
    this.watchers.get(jobId)?.cancel();
    this.watchers.delete(jobId);
  }

  /** Cancels every watch (before continue-as-new; the next run watches again). */
  unwatchAll(): void {
    for (const jobId of [...this.watchers.keys()]) this.unwatch(jobId);
  }

  /**
   * Stops and deletes a driver in the background; a failure is logged, the instance is gone anyway. No quick
   * try first: the group never waits on one. Retried at most 30 s apart (`drivers`), since the group waits for
   * its removals before it ends or continues as new; in the group's own scope, so cancelling the group cancels them.
   */
  remove(jobId: string, host: DriverHost | undefined): void {
    this.unwatch(jobId);
    this.launchedAt.delete(jobId);
    this.removals += 1;
    void removeInBackground(this.clusterName, instanceDriverId(jobId), {
      via: 'drivers',
      shielded: false,
      host,
      ended: () => {
        this.removals -= 1;
        this.changed();
      },
    });
  }

  /** Whether removals are still running (the workflow must not end or continue as new before they end). */
  removing(): boolean {
    return this.removals > 0;
  }
}
