// One job's page (`#/jobs/:jobId`): its fields, the states it went through, its tries, error and cleanup,
// its Spark UI (links and a stages summary), its memory settings, its logs, and cancel / stop / delete for
// operators. The job stays live over the `/jobs` stream (filtered to this job); after a reconnect the page
// reads it again, since Socket.IO has no resume.
import { useEffect, useRef, useState } from 'preact/hooks';
import { Fragment } from 'preact';
import { del, get, post } from '../api';
import { href, navigate, type PageProps } from '../router';
import { useCan } from '../session';
import { useStream } from '../stream';
import { TERMINAL_JOB_STATES, type Job } from '../types';
import {
  ConfirmButton,
  Empty,
  ErrorBox,
  Loading,
  PageHeader,
  Pre,
  StateBadge,
  act,
  useAsync,
  useInterval,
} from '../ui';
import { JobLogs } from './jobs-logs';
import { SparkUiPanel } from './jobs-spark-ui';
import { JobTimeline, type SeenState } from './jobs-timeline';
import './jobs.css';

export function JobPage({ params }: PageProps) {
  const { jobId } = params;
  const canOperate = useCan('operator');
  const job = useAsync((signal) => get<Job>(`/job/${encodeURIComponent(jobId)}`, undefined, signal), [jobId]);
  const [seen, setSeen] = useState<SeenState[]>([]);
  const [gone, setGone] = useState(false);

  // Record each state the page sees (first read, stream events), with the browser's clock.
  const note = (j: Job) =>
    setSeen((old) => {
      const last = old[old.length - 1];
      if (last && last.state === j.state && last.attempt === j.attempt) return old;
      return [...old, { state: j.state, attempt: j.attempt, at: Date.now() }];
    });
  useEffect(() => {
    if (job.data) note(job.data);
  }, [job.data]);

  const live = useStream<Job>('/jobs', { jobIds: jobId }, (j) => {
    if (j.jobId !== jobId) return;
    job.setData(j);
  });
  // Durations of a running job grow: redraw every second while it runs.
  const [, setTick] = useState(0);
  useInterval(() => {
    if (job.data && !TERMINAL_JOB_STATES.has(job.data.state)) setTick((t) => t + 1);
  }, 1000);
  const wasLive = useRef(false);
  useEffect(() => {
    if (live && wasLive.current === false && job.data) job.reload();
    wasLive.current = live;
  }, [live]);

  if (job.error && !job.data) {
    return (
      <section>
        <PageHeader title="Job" />
        <ErrorBox error={job.error} />
        <a href={href('/jobs')}>Back to the jobs</a>
      </section>
    );
  }
  if (!job.data) return <Loading what="Reading the job" />;
  const j = job.data;
  const ended = TERMINAL_JOB_STATES.has(j.state);
  const running = !TERMINAL_JOB_STATES.has(j.state);
  const single = j.jobType === 'SINGLE';
  const action = (verb: 'cancel' | 'stop') => () =>
    act(`${verb === 'cancel' ? 'Cancel' : 'Stop'} requested`, () => post(`/job/${encodeURIComponent(jobId)}/${verb}`));

  return (
    <section class="job-page">
      <PageHeader
        live={live}
        title={
          <>
            {j.jobName} <StateBadge state={j.state} />
          </>
        }
      >
        {running && single && (
          <ConfirmButton
            label="Stop"
            question="Stop the job? It ends FINISHED."
            variant="plain"
            hidden={!canOperate}
            onConfirm={action('stop')}
          />
        )}
        {running && single && (
          <ConfirmButton
            label="Cancel"
            question="Cancel the job? It ends CANCELED."
            hidden={!canOperate}
            onConfirm={action('cancel')}
          />
        )}
        {ended && single && (
          <ConfirmButton
            label="Delete"
            question="Delete the job and what is left of its drivers?"
            hidden={!canOperate}
            onConfirm={async () => {
              const ok = await act('Job deleted', () => del(`/job/${encodeURIComponent(jobId)}`));
              if (ok) {
                setGone(true);
                navigate('/jobs');
              }
            }}
          />
        )}
      </PageHeader>
      {gone && <Empty>The job was deleted.</Empty>}
      {job.error && <ErrorBox error={`Could not refresh the job: ${job.error}`} />}
      {j.error && (
        <div class="error-box" role="alert" aria-label="job error">
          <strong>Error: </strong>
          {j.error}
        </div>
      )}
      {j.cleanup && (
        <div class="notice" role="status">
          <strong>Cleanup pending: </strong>
          {j.cleanup}
        </div>
      )}
      <div class="grid">
        <div class="panel">
          <h2 class="panel-title">Job</h2>
          <dl class="kv">
            <dt>Id</dt>
            <dd>
              <code>{j.jobId}</code>
            </dd>
            <dt>Type</dt>
            <dd>
              {j.jobType}
              {j.groupId && (
                <>
                  {' '}
                  of group <a href={href(`/groups/${encodeURIComponent(j.groupId)}`)}>{j.groupId}</a>
                </>
              )}
              {j.scheduleId && (
                <>
                  {' '}
                  from schedule <a href={href(`/schedules/${encodeURIComponent(j.scheduleId)}`)}>{j.scheduleId}</a>
                </>
              )}
            </dd>
            <dt>Cluster</dt>
            <dd>{j.clusterName}</dd>
            <dt>Language</dt>
            <dd>{j.language}</dd>
            <dt>Main</dt>
            <dd>{j.jobClass ? <code>{j.jobClass}</code> : <span class="muted">—</span>}</dd>
            <dt>Arguments</dt>
            <dd>{j.args.length ? <code>{j.args.join(' ; ')}</code> : <span class="muted">none</span>}</dd>
            <dt>Tries</dt>
            <dd class="num-left">
              try {j.attempt} of {j.maxRetries + 1}{' '}
              <span class="muted">
                (maxRetries {j.maxRetries}
                {j.attempt > 1 ? `, ${j.attempt - 1} failed before` : ''})
              </span>
            </dd>
            <dt>Spark app</dt>
            <dd>{j.appId ? <code>{j.appId}</code> : <span class="muted">not known yet</span>}</dd>
            <dt>Tags</dt>
            <dd>{j.tags || <span class="muted">none</span>}</dd>
          </dl>
        </div>
        <div class="panel">
          <h2 class="panel-title">States</h2>
          <JobTimeline job={j} seen={seen} />
        </div>
        <SparkUiPanel job={j} />
        <div class="panel">
          <h2 class="panel-title">Memory settings</h2>
          <MemoryList job={j} />
          <h3 class="panel-subtitle">Spark configuration</h3>
          {j.jobConfig ? (
            <Pre value={j.jobConfig.split(';').join('\n')} label="Spark configuration" />
          ) : (
            <p class="muted">none</p>
          )}
          {(j.pyRequirements || j.packages) && (
            <dl class="kv">
              <dt>pyRequirements</dt>
              <dd>{j.pyRequirements || <span class="muted">none</span>}</dd>
              <dt>packages</dt>
              <dd>{j.packages || <span class="muted">none</span>}</dd>
            </dl>
          )}
        </div>
      </div>
      <h2>Logs</h2>
      <JobLogs jobId={jobId} running={running} />
    </section>
  );
}

function MemoryList({ job }: { job: Job }) {
  const entries = Object.entries(job.memorySettings).filter(([, v]) => v !== undefined);
  if (!entries.length) return <p class="muted">cluster defaults</p>;
  return (
    <dl class="kv">
      {entries.map(([k, v]) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd class="num-left">{String(v)}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
