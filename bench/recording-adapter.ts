// A cluster adapter that runs nothing, for the benchmarks that measure what the service adds before a
// driver would start.
import { performance } from 'node:perf_hooks';
import type { ClusterAdapter, DriverSpec, DriverStatus } from '../domain/driver';
import { within } from '../testkit/wait';

/**
 * Records when launch was called for each driverId (the performance.now() clock of this process, and
 * Date.now()), reports the driver RUNNING at launch and SUCCEEDED on the next status call.
 */
export class RecordingAdapter implements ClusterAdapter {
  readonly launches = new Map<string, { perf: number; wall: number; spec: DriverSpec }>();
  private readonly waiters = new Map<string, ((perf: number) => void)[]>();

  async launch(spec: DriverSpec): Promise<DriverStatus> {
    const perf = performance.now();
    const wall = Date.now();
    if (!this.launches.has(spec.driverId)) {
      this.launches.set(spec.driverId, { perf, wall, spec });
      for (const w of this.waiters.get(spec.driverId) ?? []) w(perf);
      this.waiters.delete(spec.driverId);
    }
    return { phase: 'RUNNING', startTime: this.launches.get(spec.driverId)!.wall };
  }

  async status(driverId: string): Promise<DriverStatus> {
    const l = this.launches.get(driverId);
    if (!l) return { phase: 'MISSING' };
    return { phase: 'SUCCEEDED', exitCode: 0, startTime: l.wall, endTime: Date.now() };
  }

  async logs(): Promise<[]> {
    return [];
  }

  async remove(): Promise<void> {}

  /** performance.now() of the first launch of driverId (waits for it up to timeoutMs). */
  launched(driverId: string, timeoutMs = 30_000): Promise<number> {
    const l = this.launches.get(driverId);
    if (l) return Promise.resolve(l.perf);
    return within(
      new Promise<number>((resolve) => this.waiters.set(driverId, [...(this.waiters.get(driverId) ?? []), resolve])),
      timeoutMs,
      `launch of ${driverId}`,
    );
  }
}
