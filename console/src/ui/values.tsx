// Values as the pages show them: state badges, times, durations.
import type { GroupState, JobState, ScheduleState, SqlEngineState } from '../types';

/** Every state the service has (domain/) gets a look, so a new one cannot go unstyled; SUCCEEDED is a driver's. */
const STATE_CLASS: Record<JobState | GroupState | ScheduleState | SqlEngineState | 'SUCCEEDED', string> = {
  SUBMITTED: 'pending',
  STARTING: 'pending',
  READY: 'ok',
  BUSY: 'running',
  FINISHED: 'ok',
  FAILED: 'bad',
  CANCELED: 'muted',
  UNKNOWN: 'warn',
  ACTIVE: 'ok',
  ARCHIVED: 'muted',
  ENABLED: 'ok',
  PAUSED: 'warn',
  DISABLED: 'muted',
  RUNNING: 'running',
  STOPPED: 'muted',
  SUCCEEDED: 'ok',
};

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge badge-${STATE_CLASS[state as keyof typeof STATE_CLASS] ?? 'muted'}`}>{state}</span>;
}

/** A point in time: local date and time, the exact ISO time on hover. */
export function Time({ ms }: { ms?: number | null }) {
  if (!ms) return <span class="muted">—</span>;
  const d = new Date(ms);
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()}>
      {d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })}
    </time>
  );
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m % 60} min`;
}

export function Duration({ from, to }: { from?: number | null; to?: number | null }) {
  if (!from) return <span class="muted">—</span>;
  return <span class="num">{formatDuration((to ?? Date.now()) - from)}</span>;
}
