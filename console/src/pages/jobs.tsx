// The jobs list (`#/jobs`): GET /job filtered by states, cluster, job type, tags and a search word, sorted and
// paged by the service. Every filter lives in the hash query, so a link reproduces the view. The `/jobs`
// stream keeps it live: a listed job's row changes in place, and a new job that matches the filters appears
// on the first page. The job page and the submit form live in jobs-page.tsx and jobs-submit.tsx.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api';
import { href, navigate, type PageProps } from '../router';
import { useCan } from '../session';
import { useStream } from '../stream';
import { DEFAULT_JOB_STATE_FILTER, JOB_STATES, JOB_TYPES, type Job, type JobState } from '../types';
import {
  Duration,
  ErrorBox,
  Field,
  PageHeader,
  Pager,
  StateBadge,
  Table,
  Time,
  useAsync,
  useInterval,
  usePagedList,
  useRereadOnReconnect,
  type Column,
} from '../ui';
import './jobs.css';

export { JobPage } from './jobs-page';
export { SubmitJobPage } from './jobs-submit';

const DEFAULT_STATES = DEFAULT_JOB_STATE_FILTER;
const DEFAULT_SORT = 'submitTime,desc';
const PAGE_SIZE = 20;

/** The view as the hash query holds it: `#/jobs?states=FAILED,FINISHED&cluster=default&page=1`. */
interface Filters {
  states: JobState[];
  cluster: string;
  type: string;
  tags: string;
  search: string;
  sort: string;
  page: number;
}

function filtersOf(q: URLSearchParams): Filters {
  const states = (q.get('states') ?? '').split(',').filter((s): s is JobState => (JOB_STATES as string[]).includes(s));
  return {
    states: q.has('states') ? states : DEFAULT_STATES,
    cluster: q.get('cluster') ?? '',
    type: q.get('type') ?? '',
    tags: q.get('tags') ?? '',
    search: q.get('search') ?? '',
    sort: q.get('sort') || DEFAULT_SORT,
    page: Math.max(0, Number(q.get('page')) || 0),
  };
}

function queryOf(f: Filters): Record<string, string | undefined> {
  const sameStates = f.states.length === DEFAULT_STATES.length && DEFAULT_STATES.every((s) => f.states.includes(s));
  return {
    states: sameStates ? undefined : f.states.join(',') || 'none',
    cluster: f.cluster || undefined,
    type: f.type || undefined,
    tags: f.tags || undefined,
    search: f.search || undefined,
    sort: f.sort === DEFAULT_SORT ? undefined : f.sort,
    page: f.page ? String(f.page) : undefined,
  };
}

/** Whether a job streamed in belongs in the view, by the same rules as the service's filters. */
function matches(j: Job, f: Filters): boolean {
  if (!f.states.includes(j.state)) return false;
  if (f.cluster && j.clusterName !== f.cluster) return false;
  if (f.type && j.jobType !== f.type) return false;
  if (f.search) {
    const w = f.search.toLowerCase();
    if (![j.jobName, j.jobClass ?? '', j.tags].some((s) => s.toLowerCase().includes(w))) return false;
  }
  return true;
}

const COLUMNS: Column<Job>[] = [
  {
    label: 'Name',
    sort: 'jobName',
    render: (j) => <a href={href(`/jobs/${encodeURIComponent(j.jobId)}`)}>{j.jobName}</a>,
  },
  { label: 'State', sort: 'state', render: (j) => <StateBadge state={j.state} /> },
  { label: 'Cluster', sort: 'clusterName', render: (j) => j.clusterName, class: 'hide-narrow' },
  { label: 'Type', sort: 'jobType', render: (j) => j.jobType, class: 'hide-narrow' },
  { label: 'Submitted', sort: 'submitTime', render: (j) => <Time ms={j.submitTime} />, class: 'hide-narrow' },
  { label: 'Started', sort: 'startTime', render: (j) => <Time ms={j.startTime} />, class: 'hide-narrow' },
  { label: 'Ended', sort: 'endTime', render: (j) => <Time ms={j.endTime} />, class: 'hide-narrow' },
  { label: 'Duration', render: (j) => <Duration from={j.startTime} to={j.endTime} />, class: 'num' },
  { label: 'Try', render: (j) => `${j.attempt}/${j.maxRetries + 1}`, class: 'num hide-narrow' },
];

export function JobsPage({ query }: PageProps) {
  const f = filtersOf(query);
  const canSubmit = useCan('operator');
  const key = JSON.stringify(queryOf(f));
  const clusters = useAsync((signal) => get<{ names: string[] }>('/cluster/names', undefined, signal), []);
  // No state ticked: nothing to ask (the service would read an empty filter as its default).
  const list = usePagedList<Job>(
    '/job',
    f.states.length === 0
      ? undefined
      : {
          jobStates: f.states,
          clusterNames: f.cluster || undefined,
          jobTypes: f.type || undefined,
          tags: f.tags || undefined,
          search: f.search || undefined,
          sort: f.sort,
          page: f.page,
          size: PAGE_SIZE,
        },
    PAGE_SIZE,
  );
  const [unseen, setUnseen] = useState(0);
  useEffect(() => setUnseen(0), [key]);

  const live = useStream<Job>('/jobs', { clusterNames: f.cluster || undefined, tags: f.tags || undefined }, (j) => {
    list.setData((page) => {
      if (!page) return page;
      const i = page.content.findIndex((x) => x.jobId === j.jobId);
      if (i >= 0) {
        const content = [...page.content];
        content[i] = j;
        return { ...page, content };
      }
      if (!matches(j, f)) return page;
      if (f.page === 0 && f.sort === DEFAULT_SORT) {
        const content = [j, ...page.content].slice(0, PAGE_SIZE);
        const totalElements = page.totalElements + 1;
        return { ...page, content, totalElements, totalPages: Math.ceil(totalElements / PAGE_SIZE), empty: false };
      }
      setUnseen((n) => n + 1);
      return page;
    });
  });
  useRereadOnReconnect(live, list);
  // Durations of running jobs grow: redraw every few seconds while one is listed.
  const [, setTick] = useState(0);
  useInterval(() => {
    if (list.data?.content.some((j) => j.startTime && !j.endTime)) setTick((t) => t + 1);
  }, 5000);

  const go = (change: Partial<Filters>) => navigate('/jobs', queryOf({ ...f, page: 0, ...change }), true);

  return (
    <section class="jobs-list">
      <PageHeader title="Jobs" live={live}>
        {canSubmit && (
          <a class="btn btn-primary" href={href('/jobs/new')}>
            Submit a job
          </a>
        )}
      </PageHeader>
      <JobFilters f={f} clusters={clusters.data?.names ?? []} onChange={go} />
      <ErrorBox error={list.error} />
      {unseen > 0 && (
        <p class="notice" role="status">
          {unseen} new job{unseen > 1 ? 's' : ''} match the filters.{' '}
          <button type="button" class="btn btn-plain" onClick={() => (setUnseen(0), list.reload())}>
            Refresh
          </button>
        </p>
      )}
      <div class={list.loading && list.data ? 'jobs-table loading' : 'jobs-table'} aria-busy={list.loading}>
        <Table
          caption="Jobs"
          columns={COLUMNS}
          rows={list.data?.content ?? []}
          rowKey={(j) => j.jobId}
          sort={f.sort}
          onSort={(sort) => go({ sort })}
          empty={list.loading ? 'Loading…' : 'No job matches these filters.'}
        />
      </div>
      {list.data && (
        <Pager
          page={f.page}
          totalPages={list.data.totalPages}
          total={list.data.totalElements}
          onPage={(page) => navigate('/jobs', queryOf({ ...f, page }), true)}
        />
      )}
    </section>
  );
}

/** The filter bar: checkboxes and selects apply at once; the text fields on Enter or when they lose focus. */
function JobFilters({
  f,
  clusters,
  onChange,
}: {
  f: Filters;
  clusters: string[];
  onChange: (c: Partial<Filters>) => void;
}) {
  const [search, setSearch] = useState(f.search);
  const [tags, setTags] = useState(f.tags);
  useEffect(() => setSearch(f.search), [f.search]);
  useEffect(() => setTags(f.tags), [f.tags]);
  const applyText = () => {
    if (search !== f.search || tags !== f.tags) onChange({ search: search.trim(), tags: tags.trim() });
  };
  const toggle = (s: JobState) => (e: JSX.TargetedEvent<HTMLInputElement>) =>
    onChange({ states: e.currentTarget.checked ? [...f.states, s] : f.states.filter((x) => x !== s) });
  return (
    <form
      class="panel jobs-filters"
      aria-label="filters"
      onSubmit={(e) => {
        e.preventDefault();
        applyText();
      }}
    >
      <fieldset class="states">
        <legend>States</legend>
        {JOB_STATES.map((s) => (
          <label key={s} class="check">
            <input type="checkbox" checked={f.states.includes(s)} onChange={toggle(s)} /> {s}
          </label>
        ))}
        <button type="button" class="btn btn-plain btn-small" onClick={() => onChange({ states: [...JOB_STATES] })}>
          All
        </button>
        <button type="button" class="btn btn-plain btn-small" onClick={() => onChange({ states: DEFAULT_STATES })}>
          Active
        </button>
      </fieldset>
      <div class="toolbar">
        <Field label="Cluster">
          <select value={f.cluster} onChange={(e) => onChange({ cluster: e.currentTarget.value })}>
            <option value="">any</option>
            {[...new Set([...clusters, ...(f.cluster ? [f.cluster] : [])])].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Job type">
          <select value={f.type} onChange={(e) => onChange({ type: e.currentTarget.value })}>
            <option value="">any</option>
            {JOB_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Search">
          <input
            type="search"
            value={search}
            placeholder="name, class or tag"
            onInput={(e) => setSearch(e.currentTarget.value)}
            onBlur={applyText}
          />
        </Field>
        <Field label="Tags">
          <input
            value={tags}
            placeholder="key=value;key2=value2"
            onInput={(e) => setTags(e.currentTarget.value)}
            onBlur={applyText}
          />
        </Field>
        <button type="submit" class="btn">
          Apply
        </button>
      </div>
    </form>
  );
}
