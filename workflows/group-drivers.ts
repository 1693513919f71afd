// The drivers of a group's instances, as the group workflow sees them: launches, watches and removals
// run in the background and report what they learn as events, which the workflow's loop alone handles.
import { CancellationScope, isCancellation, log } from '@temporalio/workflow';
import type { DriverSpec, DriverStatus } from '../domain/driver';
import { failureMessage } from '../domain/failure';
import { instanceDriverId } from '../domain/group';
import { drivers, watch } from './activity-options';

export interface DriverEvent {
  jobId: string;
  st: DriverStatus;
}

export class InstanceDrivers {
  /** Statuses learnt since the loop last looked, in arrival order. */
  readonly events: DriverEvent[] = [];
  private readonly watchers = new Map<string, CancellationScope>();
  private removals = 0;

  /** `changed` wakes the workflow's loop. */
  constructor(
    private readonly clusterName: string,
    private readonly changed: () => void,
  ) {}

  /** Launches (or, being idempotent, finds) an instance's driver; its status arrives as an event. */
  launch(jobId: string, spec: DriverSpec): void {
    void drivers
      .launchDriver(this.clusterName, spec)
      .then(
        (st) => this.events.push({ jobId, st }),
        (err: unknown) =>
          this.events.push({ jobId, st: { phase: 'FAILED', message: `launch failed: ${failureMessage(err)}` } }),
      )
      .finally(this.changed);
  }

  isWatched(jobId: string): boolean {
    return this.watchers.has(jobId);
  }

  /** Watches a driver until its status differs from `known`; the new status arrives as an event. */
  watch(jobId: string, known: DriverStatus): void {
    const scope = new CancellationScope();
    this.watchers.set(jobId, scope);
    void scope
      .run(() => watch.watchDriver(this.clusterName, instanceDriverId(jobId), known))
      .then(
        (st) => this.events.push({ jobId, st }),
        (err: unknown) => {
          if (!isCancellation(err)) this.events.push({ jobId, st: { phase: 'UNKNOWN', message: failureMessage(err) } });
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

  /** Stops and deletes a driver in the background; a failure is logged, the instance is gone anyway. */
  remove(jobId: string): void {
    this.unwatch(jobId);
    this.removals += 1;
    void drivers
      .removeDriver(this.clusterName, instanceDriverId(jobId))
      .catch((err: unknown) => log.warn('driver removal failed', { jobId, error: failureMessage(err) }))
      .finally(() => {
        this.removals -= 1;
        this.changed();
      });
  }

  /** Whether removals are still running (the workflow must not end or continue as new before they end). */
  removing(): boolean {
    return this.removals > 0;
  }
}
