// What the overview reads from the REST API (the charts' arithmetic is in overview-math.ts). Counts are the
// `totalElements` of one-item pages (one list call per state); jobs of the last 24 hours come from GET /job
// sorted by submit and by end time; execution latencies from the results of the active groups.
import { get, type Page } from '../api';
import {
  GROUP_STATES,
  JOB_STATES,
  SCHEDULE_STATES,
  type Job,
  type JobInstanceResult,
  type JobState,
  type ScheduleState,
} from '../types';

const PAGE = 500;
const MAX_PAGES = 4;

export { GROUP_STATES, SCHEDULE_STATES };

export interface Counts {
  single: Record<JobState, number>;
  interactive: Record<JobState, number>;
  groups: Record<(typeof GROUP_STATES)[number], number>;
  schedules: Record<ScheduleState, number>;
}

const total = async (path: string, query: Record<string, string>, signal?: AbortSignal) =>
  (await get<Page<unknown>>(path, { ...query, size: 1 }, signal)).totalElements;

async function byState<S extends string>(
  states: readonly S[],
  count: (s: S) => Promise<number>,
): Promise<Record<S, number>> {
  const values = await Promise.all(states.map(count));
  return Object.fromEntries(states.map((s, i) => [s, values[i]])) as Record<S, number>;
}

export async function loadCounts(signal?: AbortSignal): Promise<Counts> {
  const jobs = (type: string) => byState(JOB_STATES, (s) => total('/job', { jobTypes: type, jobStates: s }, signal));
  const [single, interactive, groups, schedules] = await Promise.all([
    jobs('SINGLE'),
    jobs('INTERACTIVE'),
    byState(GROUP_STATES, (s) => total('/group', { groupStates: s }, signal)),
    byState(SCHEDULE_STATES, (s) => total('/schedule', { scheduleStates: s }, signal)),
  ]);
  return { single, interactive, groups, schedules };
}

/** Jobs submitted or ended since `since`, newest pages first, at most MAX_PAGES pages of each. */
export async function loadRecentJobs(since: number, signal?: AbortSignal): Promise<Map<string, Job>> {
  const out = new Map<string, Job>();
  const walk = async (query: Record<string, string>, timeOf: (j: Job) => number | undefined) => {
    for (let page = 0; page < MAX_PAGES; page++) {
      const p = await get<Page<Job>>('/job', { ...query, page, size: PAGE }, signal);
      for (const j of p.content) out.set(j.jobId, j);
      const last = p.content[p.content.length - 1];
      if (p.last || !last || (timeOf(last) ?? 0) < since) return;
    }
  };
  await Promise.all([
    walk({ jobStates: JOB_STATES.join(','), sort: 'submitTime,desc' }, (j) => j.submitTime),
    walk({ jobStates: 'FINISHED,FAILED,CANCELED', sort: 'endTime,desc' }, (j) => j.endTime),
  ]);
  return out;
}

/** Completed executions of the (at most 20) newest active groups, their latest 100 each. */
export async function loadResults(signal?: AbortSignal): Promise<Map<string, JobInstanceResult>> {
  const groups = await get<Page<{ id: string }>>('/group', { groupStates: 'ACTIVE', size: 20 }, signal);
  const pages = await Promise.all(
    groups.content.map((g) =>
      get<Page<JobInstanceResult>>(`/group/${encodeURIComponent(g.id)}/job/result`, { size: 100 }, signal),
    ),
  );
  const out = new Map<string, JobInstanceResult>();
  for (const r of pages.flatMap((p) => p.content)) if (r.endTime) out.set(r.jobInstanceId, r);
  return out;
}
