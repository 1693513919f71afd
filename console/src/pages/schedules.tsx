// The schedules pages: the list (`#/schedules`, with the create form in a dialog) and a schedule's page
// (`#/schedules/:scheduleId`): its cron in words, its next run times, its runs (kept live by the `/jobs`
// stream), pause / resume / stop / delete and the edit form for operators.
import { useState } from 'preact/hooks';
import { del, get, post } from '../api';
import { href, navigate, type PageProps } from '../router';
import { useCan } from '../session';
import { useStream } from '../stream';
import { JOB_STATES, SCHEDULE_STATES, type Job, type Schedule } from '../types';
import {
  act,
  Button,
  ConfirmButton,
  Dialog,
  Duration,
  ErrorBox,
  Loading,
  PagedTable,
  PageHeader,
  SearchField,
  StateBadge,
  Table,
  Time,
  useAsync,
  useInterval,
  useListView,
  usePagedList,
  useRereadOnReconnect,
  type Column,
} from '../ui';
import { describeCron } from './schedules-cron';
import { ScheduleForm } from './schedules-form';
import './groups.css';

/** GET /schedule/{id} adds the next run times while the schedule is ENABLED. */
type ScheduleDetail = Schedule & { nextRunTimes?: number[] };

const SIZE = 20;
const ALL_STATES = SCHEDULE_STATES;

function Cron({ cron }: { cron: string }) {
  const words = describeCron(cron);
  return (
    <span class="cron">
      <code>{cron}</code>
      {words && <span class="muted"> · {words}</span>}
    </span>
  );
}

/** A job event applied to a schedule's runs, newest first. */
function applyRun(jobs: Job[], j: Job): Job[] {
  if (jobs.some((x) => x.jobId === j.jobId)) return jobs.map((x) => (x.jobId === j.jobId ? j : x));
  return [j, ...jobs].slice(0, 20);
}

const LIST_COLUMNS: Column<Schedule>[] = [
  { label: 'Name', sort: 'name', render: (s) => <a href={href(`/schedules/${s.id}`)}>{s.name}</a> },
  { label: 'State', sort: 'state', render: (s) => <StateBadge state={s.state} /> },
  { label: 'When', sort: 'cron', render: (s) => <Cron cron={s.cron} /> },
  { label: 'Job class', render: (s) => s.jobClass, class: 'hide-narrow' },
  { label: 'Cluster', sort: 'clusterName', render: (s) => s.clusterName, class: 'hide-narrow' },
  {
    label: 'Last run',
    render: (s) =>
      s.jobs[0] ? (
        <a href={href(`/jobs/${encodeURIComponent(s.jobs[0].jobId)}`)} title={s.jobs[0].jobId}>
          <StateBadge state={s.jobs[0].state} />
        </a>
      ) : (
        <span class="muted">none yet</span>
      ),
  },
  { label: 'Created', sort: 'createdTime', render: (s) => <Time ms={s.createdTime} />, class: 'hide-narrow' },
];

export function SchedulesPage({ query }: PageProps) {
  const canWrite = useCan('operator');
  const { view, go } = useListView({ sort: 'createdTime,desc', state: query.get('state') ?? '' });
  const [creating, setCreating] = useState(false);
  const { page, sort, state, search } = view;
  const list = usePagedList<Schedule>(
    '/schedule',
    { page, size: SIZE, sort, search, scheduleStates: state ? [state] : ALL_STATES, jobStates: JOB_STATES },
    SIZE,
  );
  // Runs of any schedule: the job stream has no schedule filter, so rows pick their own.
  const live = useStream<Job>('/jobs', {}, (j) => {
    if (j.scheduleId) list.patchRows((s) => (s.id === j.scheduleId ? { ...s, jobs: applyRun(s.jobs, j) } : s));
  });
  useRereadOnReconnect(live, list);
  return (
    <section>
      <PageHeader title="Schedules" live={live}>
        {canWrite && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New schedule
          </Button>
        )}
      </PageHeader>
      <div class="toolbar">
        <SearchField value={search} onChange={(v) => go({ search: v })} />
        <label class="field">
          <span class="field-label">State</span>
          <select value={state} onChange={(e) => go({ state: e.currentTarget.value })}>
            <option value="">all</option>
            {ALL_STATES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </div>
      <PagedTable
        list={list}
        noun="schedules"
        columns={LIST_COLUMNS}
        rowKey={(s) => s.id}
        sort={sort}
        onSort={(s) => go({ sort: s, page })}
        page={page}
        onPage={(p) => go({ page: p })}
      />
      <Dialog open={creating} title="New schedule" onClose={() => setCreating(false)}>
        <ScheduleForm onDone={(id) => navigate(`/schedules/${id}`)} />
      </Dialog>
    </section>
  );
}

const RUN_COLUMNS: Column<Job>[] = [
  { label: 'Run', render: (j) => <a href={href(`/jobs/${encodeURIComponent(j.jobId)}`)}>{j.jobId}</a> },
  { label: 'State', render: (j) => <StateBadge state={j.state} /> },
  { label: 'Submitted', render: (j) => <Time ms={j.submitTime} />, class: 'hide-narrow' },
  { label: 'Took', render: (j) => <Duration from={j.startTime} to={j.endTime} />, class: 'num' },
];

function ScheduleActions({ s, reload, onEdit }: { s: ScheduleDetail; reload: () => void; onEdit: () => void }) {
  if (!useCan('operator')) return null;
  const change = (what: string, done: string) => () => act(done, () => post(`/schedule/${s.id}/${what}`)).then(reload);
  return (
    <>
      {s.state === 'ENABLED' && <Button onClick={change('pause', 'Schedule paused')}>Pause</Button>}
      {s.state !== 'ENABLED' && (
        <Button variant="primary" onClick={change('resume', 'Schedule resumed')}>
          Resume
        </Button>
      )}
      {s.state !== 'DISABLED' && (
        <ConfirmButton
          label="Stop"
          question="No more runs until resumed?"
          onConfirm={change('disable', 'Schedule stopped')}
        />
      )}
      <Button onClick={onEdit}>Edit</Button>
      <ConfirmButton
        label="Delete"
        question={`Delete ${s.name}? Its runs stay.`}
        onConfirm={() =>
          act('Schedule deleted', () => del(`/schedule/${s.id}`)).then((ok) => ok && navigate('/schedules'))
        }
      />
    </>
  );
}

function When({ s }: { s: ScheduleDetail }) {
  const words = describeCron(s.cron);
  return (
    <div class="panel">
      <h2 class="panel-title">When</h2>
      <p class="cron-words">{words ?? 'A cron expression this page cannot put in words'}</p>
      <dl class="kv">
        <dt>Cron</dt>
        <dd>
          <code>{s.cron}</code> (UTC)
        </dd>
        <dt>Window</dt>
        <dd>
          {s.startTime || s.endTime ? (
            <>
              {s.startTime ? <Time ms={s.startTime} /> : 'any time'} – {s.endTime ? <Time ms={s.endTime} /> : 'no end'}
            </>
          ) : (
            'none'
          )}
        </dd>
        {s.disabledTime && (
          <>
            <dt>Stopped</dt>
            <dd>
              <Time ms={s.disabledTime} />
            </dd>
          </>
        )}
      </dl>
      <h3>Next runs</h3>
      {s.nextRunTimes?.length ? (
        <ol class="next-runs" aria-label="next runs">
          {s.nextRunTimes.map((t) => (
            <li key={t}>
              <Time ms={t} />
            </li>
          ))}
        </ol>
      ) : (
        <p class="muted">{s.state === 'ENABLED' ? 'None scheduled.' : `None while ${s.state.toLowerCase()}.`}</p>
      )}
    </div>
  );
}

function What({ s }: { s: ScheduleDetail }) {
  const conf = Object.entries(s.jobConfig)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
  return (
    <div class="panel">
      <h2 class="panel-title">What</h2>
      <dl class="kv">
        <dt>Job class</dt>
        <dd>
          <code>{s.jobClass}</code>
        </dd>
        <dt>Language</dt>
        <dd>{s.language}</dd>
        <dt>Cluster</dt>
        <dd>{s.clusterName}</dd>
        <dt>Arguments</dt>
        <dd>{s.args.length ? <code>{s.args.join(' ')}</code> : <span class="muted">none</span>}</dd>
        <dt>Spark configuration</dt>
        <dd>{conf ? <code>{conf}</code> : <span class="muted">none</span>}</dd>
        <dt>Tags</dt>
        <dd>{s.tags || <span class="muted">none</span>}</dd>
        <dt>Retries</dt>
        <dd class="num-left">{s.maxRetries}</dd>
        <dt>Created</dt>
        <dd>
          <Time ms={s.createdTime} />
        </dd>
        {s.description && (
          <>
            <dt>Description</dt>
            <dd>{s.description}</dd>
          </>
        )}
      </dl>
    </div>
  );
}

export function SchedulePage({ params }: PageProps) {
  const id = params.scheduleId;
  const [editing, setEditing] = useState(false);
  const schedule = useAsync((signal) => get<ScheduleDetail>(`/schedule/${id}`, undefined, signal), [id]);
  const s = schedule.data;
  const live = useStream<Job>('/jobs', { clusterNames: s?.clusterName }, (j) => {
    if (j.scheduleId === id) schedule.setData((prev) => prev && { ...prev, jobs: applyRun(prev.jobs, j) });
  });
  // The next run times move on as runs fire: read the schedule again now and then.
  useInterval(schedule.reload, 30_000);
  if (!s) return schedule.error ? <ErrorBox error={schedule.error} /> : <Loading what="Loading the schedule" />;
  return (
    <section class="schedule-page">
      <PageHeader
        title={
          <>
            <a class="crumb" href={href('/schedules')}>
              Schedules
            </a>{' '}
            / {s.name}
          </>
        }
        live={live}
      >
        <StateBadge state={s.state} />
        <ScheduleActions s={s} reload={schedule.reload} onEdit={() => setEditing(true)} />
      </PageHeader>
      <ErrorBox error={schedule.error} />
      <div class="grid">
        <When s={s} />
        <What s={s} />
      </div>
      <h2>Runs</h2>
      <Table columns={RUN_COLUMNS} rows={s.jobs} rowKey={(j) => j.jobId} empty="No runs yet." caption="runs" />
      <Dialog open={editing} title={`Edit ${s.name}`} onClose={() => setEditing(false)}>
        <ScheduleForm
          schedule={s}
          onDone={() => {
            setEditing(false);
            schedule.reload();
          }}
        />
      </Dialog>
    </section>
  );
}
