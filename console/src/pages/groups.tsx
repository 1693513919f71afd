// The groups pages: the list (`#/groups`, with the create form in a dialog) and a group's page
// (`#/groups/:groupId`): its fields, its instances kept live by the `/jobs` stream, scale, pause / resume /
// restart / archive / delete for operators, the execute panel and the live results list.
import { useState } from 'preact/hooks';
import { del, get, post } from '../api';
import { href, navigate, type PageProps } from '../router';
import { useCan } from '../session';
import { useStream } from '../stream';
import { DEFAULT_JOB_STATE_FILTER, GROUP_STATES, TERMINAL_JOB_STATES, type Group, type Job } from '../types';
import {
  act,
  Button,
  ConfirmButton,
  Dialog,
  ErrorBox,
  Loading,
  notify,
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
import { CreateGroupForm } from './groups-create';
import { EditGroupForm } from './groups-edit';
import { ExecutePanel } from './groups-execute';
import { InstanceLink, ResultsList } from './groups-results';
import { ScaleControl } from './groups-scale';
import './groups.css';

const SIZE = 20;
const LIVE_STATES = DEFAULT_JOB_STATE_FILTER;
const isLive = (j: Job) => !TERMINAL_JOB_STATES.has(j.state);

/** A job event applied to a list of instances that shows live ones only (or all, newest first). */
function applyJob(jobs: Job[], j: Job, keepEnded: boolean): Job[] {
  const rest = jobs.filter((x) => x.jobId !== j.jobId);
  if (!keepEnded && !isLive(j)) return rest;
  const at = jobs.findIndex((x) => x.jobId === j.jobId);
  if (at >= 0) return jobs.map((x) => (x.jobId === j.jobId ? j : x));
  return [j, ...rest];
}

function InstanceCounts({ g }: { g: Group }) {
  const ready = g.jobs.filter((j) => j.state === 'READY' || j.state === 'BUSY').length;
  return (
    <span class="num" title="instances ready or busy / wanted scale">
      {ready} / {g.scale}
    </span>
  );
}

function GroupState({ g }: { g: Group }) {
  return (
    <span class="badges">
      <StateBadge state={g.state} />
      {g.paused && <StateBadge state="PAUSED" />}
    </span>
  );
}

const LIST_COLUMNS: Column<Group>[] = [
  { label: 'Name', sort: 'name', render: (g) => <a href={href(`/groups/${g.id}`)}>{g.name}</a> },
  { label: 'State', sort: 'state', render: (g) => <GroupState g={g} /> },
  { label: 'Kind', sort: 'kind', render: (g) => g.kind, class: 'hide-narrow' },
  { label: 'Language', render: (g) => g.language, class: 'hide-narrow' },
  { label: 'Cluster', sort: 'clusterName', render: (g) => g.clusterName, class: 'hide-narrow' },
  { label: 'Ready / scale', sort: 'scale', render: (g) => <InstanceCounts g={g} />, class: 'num' },
  { label: 'Created', sort: 'createdTime', render: (g) => <Time ms={g.createdTime} />, class: 'hide-narrow' },
];

export function GroupsPage({ query }: PageProps) {
  const canWrite = useCan('operator');
  const { view, go } = useListView({ sort: 'createdTime,desc', state: query.get('state') ?? 'ACTIVE' });
  const [creating, setCreating] = useState(false);
  const { page, sort, state, search } = view;
  const list = usePagedList<Group>(
    '/group',
    { page, size: SIZE, sort, search, groupStates: state ? [state] : undefined, jobStates: LIVE_STATES },
    SIZE,
  );
  const ids = (list.data?.content ?? []).map((g) => g.id);
  const live = useStream<Job>('/jobs', { groupIds: ids.length ? ids : ['-'] }, (j) =>
    list.patchRows((g) => (g.id === j.groupId ? { ...g, jobs: applyJob(g.jobs, j, false) } : g)),
  );
  useRereadOnReconnect(live, list);
  return (
    <section>
      <PageHeader title="Groups" live={live}>
        {canWrite && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New group
          </Button>
        )}
      </PageHeader>
      <div class="toolbar">
        <SearchField value={search} onChange={(v) => go({ search: v })} />
        <label class="field">
          <span class="field-label">State</span>
          <select value={state} onChange={(e) => go({ state: e.currentTarget.value })}>
            {GROUP_STATES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
            <option value="">all</option>
          </select>
        </label>
      </div>
      <PagedTable
        list={list}
        noun="groups"
        columns={LIST_COLUMNS}
        rowKey={(g) => g.id}
        sort={sort}
        onSort={(s) => go({ sort: s, page })}
        page={page}
        onPage={(p) => go({ page: p })}
      />
      <Dialog open={creating} title="New group" onClose={() => setCreating(false)}>
        <CreateGroupForm onCreated={(id) => navigate(`/groups/${id}`)} />
      </Dialog>
    </section>
  );
}

const INSTANCE_COLUMNS: Column<Job>[] = [
  {
    label: 'Instance',
    render: (j) => <InstanceLink jobId={j.jobId} groupId={j.groupId} />,
  },
  { label: 'State', render: (j) => <StateBadge state={j.state} /> },
  { label: 'Submitted', render: (j) => <Time ms={j.submitTime} />, class: 'hide-narrow' },
  { label: 'Started', render: (j) => <Time ms={j.startTime} /> },
  { label: 'Error', render: (j) => j.error ?? '', class: 'hide-narrow instance-error' },
];

function GroupFields({ g }: { g: Group }) {
  const mem = Object.entries(g.memorySettings)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');
  const conf = Object.entries(g.jobConfig)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
  return (
    <dl class="kv">
      <dt>Id</dt>
      <dd>
        <code>{g.id}</code>
      </dd>
      <dt>Kind</dt>
      <dd>{g.kind}</dd>
      <dt>Language</dt>
      <dd>{g.language}</dd>
      <dt>Cluster</dt>
      <dd>{g.clusterName}</dd>
      <dt>Pause when idle</dt>
      <dd>{g.autoPause ? 'yes' : 'no'}</dd>
      <dt>Created</dt>
      <dd>
        <Time ms={g.createdTime} />
      </dd>
      {g.archivedTime && (
        <>
          <dt>Archived</dt>
          <dd>
            <Time ms={g.archivedTime} />
          </dd>
        </>
      )}
      {g.description && (
        <>
          <dt>Description</dt>
          <dd>{g.description}</dd>
        </>
      )}
      <dt>Tags</dt>
      <dd>{g.tags || <span class="muted">none</span>}</dd>
      <dt>Spark configuration</dt>
      <dd>{conf ? <code>{conf}</code> : <span class="muted">none</span>}</dd>
      <dt>Memory</dt>
      <dd>
        <code>{mem}</code>
      </dd>
      {g.pyRequirements && (
        <>
          <dt>Python requirements</dt>
          <dd>
            <code>{g.pyRequirements}</code>
          </dd>
        </>
      )}
      {g.packages && (
        <>
          <dt>Packages</dt>
          <dd>
            <code>{g.packages}</code>
          </dd>
        </>
      )}
    </dl>
  );
}

function GroupActions({ g, reload }: { g: Group; reload: () => void }) {
  const canWrite = useCan('operator');
  const [editing, setEditing] = useState(false);
  if (!canWrite || g.state === 'ARCHIVED')
    return g.state === 'ARCHIVED' && canWrite ? (
      <ConfirmButton
        label="Delete"
        question={`Delete ${g.name} and its results?`}
        onConfirm={() => act('Group deleted', () => del(`/group/${g.id}`)).then((ok) => ok && navigate('/groups'))}
      />
    ) : null;
  const run = (what: string, done: string) => () => act(done, () => post(`/group/${g.id}/${what}`)).then(reload);
  return (
    <>
      <Button variant="plain" onClick={() => setEditing(true)}>
        Edit
      </Button>
      <Dialog open={editing} title={`Edit ${g.name}`} onClose={() => setEditing(false)}>
        <EditGroupForm
          group={g}
          onSaved={() => {
            setEditing(false);
            notify('Group updated');
            reload();
          }}
        />
      </Dialog>
      {g.paused ? (
        <Button variant="primary" onClick={run('resume', 'Group resumed')}>
          Resume
        </Button>
      ) : (
        <ConfirmButton
          label="Pause"
          variant="plain"
          question="Stop its drivers until resumed?"
          onConfirm={run('pause', 'Group paused')}
        />
      )}
      <ConfirmButton
        label="Restart"
        variant="plain"
        question="Replace every driver?"
        onConfirm={run('restart', 'Group restarting')}
      />
      <ConfirmButton label="Archive" question="Stop its drivers for good?" onConfirm={run('stop', 'Group archived')} />
      <ConfirmButton
        label="Delete"
        question={`Delete ${g.name} and its results?`}
        onConfirm={() => act('Group deleted', () => del(`/group/${g.id}`)).then((ok) => ok && navigate('/groups'))}
      />
    </>
  );
}

export function GroupPage({ params }: PageProps) {
  const id = params.groupId;
  const canWrite = useCan('operator');
  const [showEnded, setShowEnded] = useState(false);
  const group = useAsync(
    (signal) =>
      get<Group>(`/group/${id}`, showEnded ? { jobStates: [...LIVE_STATES, ...TERMINAL_JOB_STATES] } : {}, signal),
    [id, showEnded],
  );
  const live = useStream<Job>('/jobs', { groupIds: id }, (j) =>
    group.setData((g) => g && { ...g, jobs: applyJob(g.jobs, j, showEnded) }),
  );
  // Group fields (scale, paused, error) have no stream: read them again now and then.
  useInterval(group.reload, 10_000);
  const g = group.data;
  if (!g) return group.error ? <ErrorBox error={group.error} /> : <Loading what="Loading the group" />;
  return (
    <section class="group-page">
      <PageHeader
        title={
          <>
            <a class="crumb" href={href('/groups')}>
              Groups
            </a>{' '}
            / {g.name}
          </>
        }
        live={live}
      >
        <GroupState g={g} />
        <GroupActions g={g} reload={group.reload} />
      </PageHeader>
      <ErrorBox error={group.error} />
      {g.error && <ErrorBox error={`The group stopped replacing drivers: ${g.error}`} />}
      <div class="group-top">
        <div class="panel">
          <GroupFields g={g} />
        </div>
        <div class="panel">
          <h2 class="panel-title">
            Instances{' '}
            <span class="muted num">
              <InstanceCounts g={g} />
            </span>
          </h2>
          {canWrite && g.state === 'ACTIVE' && <ScaleControl g={g} onDone={group.reload} />}
          <label class="check">
            <input type="checkbox" checked={showEnded} onChange={(e) => setShowEnded(e.currentTarget.checked)} /> Show
            ended instances
          </label>
          <Table
            columns={INSTANCE_COLUMNS}
            rows={g.jobs}
            rowKey={(j) => j.jobId}
            empty={g.paused ? 'Paused: no drivers until resumed.' : 'No instances running.'}
            caption="instances"
          />
        </div>
      </div>
      {canWrite && g.state === 'ACTIVE' && !g.paused && <ExecutePanel group={g} />}
      {canWrite && g.paused && <p class="muted">Paused: resume the group to run executions.</p>}
      <ResultsList groupId={g.id} />
    </section>
  );
}
