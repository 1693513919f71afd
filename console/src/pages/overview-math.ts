// The overview's chart arithmetic, pure (no browser, no API): jobs per hour of the last 24 hours, and the
// latency of the latest completed executions.
import type { Job, JobInstanceResult } from '../types';

export const HOUR = 3_600_000;
export const WINDOW_HOURS = 24;

export const OUTCOMES = ['FINISHED', 'FAILED', 'CANCELED'] as const;

/** Per hour of the last WINDOW_HOURS before `now`: submissions, then each outcome. */
export function jobBuckets(jobs: Iterable<Job>, now: number): { start: number; values: number[] }[] {
  const end = Math.ceil(now / HOUR) * HOUR;
  const start = end - WINDOW_HOURS * HOUR;
  const buckets = Array.from({ length: WINDOW_HOURS }, (_, i) => ({
    start: start + i * HOUR,
    values: [0, ...OUTCOMES.map(() => 0)],
  }));
  const at = (t: number | undefined) => (t && t >= start && t < end ? Math.floor((t - start) / HOUR) : -1);
  for (const j of jobs) {
    const s = at(j.submitTime);
    if (s >= 0) buckets[s].values[0]++;
    const o = OUTCOMES.indexOf(j.state as (typeof OUTCOMES)[number]);
    const e = at(j.endTime);
    if (o >= 0 && e >= 0) buckets[e].values[1 + o]++;
  }
  return buckets;
}

/** The latest `max` completed executions, oldest first, with their latency (endTime − startTime). */
export function latencies(results: Iterable<JobInstanceResult>, max = 200): { endTime: number; ms: number }[] {
  return [...results]
    .filter((r) => r.endTime && r.startTime)
    .sort((a, b) => a.endTime! - b.endTime!)
    .slice(-max)
    .map((r) => ({ endTime: r.endTime!, ms: Math.max(0, r.endTime! - r.startTime!) }));
}
