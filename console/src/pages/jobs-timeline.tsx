// A job's states over time, honest about what is known: the service records three moments (submitted, driver
// running, ended); the states in between are known only when this page saw them arrive on the stream, with
// the browser's clock. A bar shows the waiting and running phases; the list gives every known moment.
import type { Job, JobState } from '../types';
import { Time, formatDuration } from '../ui';

export interface SeenState {
  state: JobState;
  attempt: number;
  /** The browser's clock when the page saw the state. */
  at: number;
}

interface Moment {
  at: number;
  label: string;
  source: 'service' | 'seen';
}

function momentsOf(job: Job, seen: SeenState[]): Moment[] {
  const out: Moment[] = [{ at: job.submitTime, label: 'submitted', source: 'service' }];
  if (job.startTime) out.push({ at: job.startTime, label: 'driver running', source: 'service' });
  if (job.endTime) out.push({ at: job.endTime, label: `ended ${job.state}`, source: 'service' });
  seen.forEach((s, i) => {
    const label = `${s.state}${s.attempt > 1 ? ` (try ${s.attempt})` : ''}${i === 0 ? ' when this page opened' : ''}`;
    out.push({ at: s.at, label, source: 'seen' });
  });
  return out.sort((a, b) => a.at - b.at);
}

export function JobTimeline({ job, seen }: { job: Job; seen: SeenState[] }) {
  const now = Date.now();
  const until = job.endTime ?? now;
  const total = Math.max(1, until - job.submitTime);
  const waiting = (job.startTime ?? until) - job.submitTime;
  const runningMs = job.startTime ? until - job.startTime : 0;
  const first = seen[0];
  return (
    <div class="timeline">
      <div
        class="timeline-bar"
        role="img"
        aria-label={`waiting ${formatDuration(waiting)}, running ${formatDuration(runningMs)}`}
      >
        <span class="tl-wait" style={{ flexGrow: Math.max(waiting, 0) / total }} />
        <span class={`tl-run ${job.endTime ? '' : 'tl-open'}`} style={{ flexGrow: Math.max(runningMs, 0) / total }} />
      </div>
      <p class="timeline-legend muted num-left">
        <span class="tl-key tl-wait" aria-hidden="true" /> waiting {formatDuration(Math.max(waiting, 0))}
        <span class="tl-key tl-run" aria-hidden="true" /> running {job.startTime ? formatDuration(runningMs) : '—'}
        {!job.endTime && ' (so far)'}
      </p>
      <ol class="timeline-list">
        {momentsOf(job, seen).map((m, i) => (
          <li key={i} class={m.source === 'seen' ? 'tl-seen' : ''}>
            <Time ms={m.at} /> <span>{m.label}</span>
            {m.source === 'seen' && <span class="muted"> · seen here</span>}
          </li>
        ))}
      </ol>
      <p class="field-hint">
        The service records when a job was submitted, when its driver started and when it ended. Other states show only
        as this page saw them{first ? ` (since ${new Date(first.at).toLocaleTimeString()})` : ''}.
      </p>
    </div>
  );
}
