// The overview (`#/`): how many jobs are in each state (single jobs and group instances apart), groups and
// schedules; jobs per hour over the last 24 hours (submissions and outcomes); and the latency of the latest
// group executions. It stays live without reloading: every event of the /jobs stream updates the chart and
// (debounced) re-reads the counts, and every completed result of /group-job-results joins the latency chart.
import { useEffect, useRef, useState } from 'preact/hooks';
import { href, type PageProps } from '../router';
import { useStream } from '../stream';
import { JOB_STATES, type Job, type JobInstanceResult } from '../types';
import { ErrorBox, PageHeader, StateBadge, useAsync, useInterval } from '../ui';
import { BarChart, LineChart, type Series } from './overview-chart';
import { GROUP_STATES, loadCounts, loadRecentJobs, loadResults, SCHEDULE_STATES, type Counts } from './overview-data';
import { HOUR, jobBuckets, latencies, WINDOW_HOURS } from './overview-math';
import './overview.css';

const COUNTS_DEBOUNCE_MS = 1500;
const COUNTS_REFRESH_MS = 30_000;

const JOB_SERIES: Series[] = [
  { name: 'submitted', class: 's-submitted', stack: 'in' },
  { name: 'finished', class: 's-finished', stack: 'out' },
  { name: 'failed', class: 's-failed', stack: 'out' },
  { name: 'canceled', class: 's-canceled', stack: 'out' },
];

const hourLabel = (t: number) =>
  new Date(t).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });
const timeLabel = (t: number) => new Date(t).toLocaleTimeString(undefined, { hour12: false });

function CountCard({
  title,
  link,
  states,
  values,
}: {
  title: string;
  link: string;
  states: readonly string[];
  values: Record<string, number> | undefined;
}) {
  const sum = values ? states.reduce((s, k) => s + values[k], 0) : undefined;
  return (
    <section class="panel count-card" aria-labelledby={`count-${link}-${title}`}>
      <h2 id={`count-${link}-${title}`} class="count-title">
        <a href={href(link)}>{title}</a>
        <span class="num count-sum">{sum ?? '—'}</span>
      </h2>
      <table aria-label={`${title} by state`}>
        <tbody>
          {states.map((s) => (
            <tr key={s} class={values && values[s] === 0 ? 'zero' : undefined}>
              <th scope="row">
                <StateBadge state={s} />
              </th>
              <td class="num">{values ? values[s] : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function OverviewPage(_: PageProps) {
  const [now, setNow] = useState(Date.now);
  useInterval(() => setNow(Date.now()), 60_000);

  const counts = useAsync<Counts>((signal) => loadCounts(signal), []);
  const jobs = useAsync((signal) => loadRecentJobs(Date.now() - WINDOW_HOURS * HOUR, signal), []);
  const results = useAsync((signal) => loadResults(signal), []);

  // Counts follow the job stream, at most once per COUNTS_DEBOUNCE_MS, and a timer for groups and schedules.
  const pending = useRef<ReturnType<typeof setTimeout>>();
  const recount = () => {
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = undefined;
      counts.reload();
    }, COUNTS_DEBOUNCE_MS);
  };
  useEffect(() => () => clearTimeout(pending.current), []);
  useInterval(counts.reload, COUNTS_REFRESH_MS);

  const jobsLive = useStream<Job>('/jobs', {}, (job) => {
    jobs.setData((m) => new Map(m).set(job.jobId, job));
    recount();
  });
  const resultsLive = useStream<JobInstanceResult>('/group-job-results', {}, (r) => {
    if (r.endTime) results.setData((m) => new Map(m).set(r.jobInstanceId, r));
  });

  const buckets = jobBuckets(jobs.data?.values() ?? [], now).map((b) => ({
    label: hourLabel(b.start),
    values: b.values,
  }));
  const points = latencies(results.data?.values() ?? []).map((p) => ({ label: timeLabel(p.endTime), value: p.ms }));
  const c = counts.data;

  return (
    <>
      <PageHeader title="Overview" live={jobsLive && resultsLive} />
      <ErrorBox error={counts.error ?? jobs.error ?? results.error} />
      <div class="counts">
        <CountCard title="Single jobs" link="/jobs" states={JOB_STATES} values={c?.single} />
        <CountCard title="Group instances" link="/groups" states={JOB_STATES} values={c?.interactive} />
        <div class="counts-stack">
          <CountCard title="Groups" link="/groups" states={GROUP_STATES} values={c?.groups} />
          <CountCard title="Schedules" link="/schedules" states={SCHEDULE_STATES} values={c?.schedules} />
        </div>
      </div>
      <div class="charts">
        <section class="panel" aria-labelledby="chart-jobs-h">
          <h2 id="chart-jobs-h" class="chart-title">
            Jobs per hour, last {WINDOW_HOURS} hours
          </h2>
          <p class="muted chart-note">Single jobs and group instances: submitted, and how they ended.</p>
          <BarChart id="chart-jobs" title="Jobs per hour" series={JOB_SERIES} buckets={buckets} />
        </section>
        <section class="panel" aria-labelledby="chart-latency-h">
          <h2 id="chart-latency-h" class="chart-title">
            Execution latency
          </h2>
          <p class="muted chart-note">Latest executions in active groups: end time − start time, oldest first.</p>
          <LineChart id="chart-latency" title="Execution latency" points={points} />
        </section>
      </div>
    </>
  );
}
