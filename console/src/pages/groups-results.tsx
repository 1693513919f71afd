// The results list of a group's page (GET /group/{id}/job/result, paged, newest first), kept live by the
// `/group-job-results` stream: a new execution appears on the first page, a running one completes in place.
import { useState } from 'preact/hooks';
import { get, type Page } from '../api';
import { href } from '../router';
import { useStream } from '../stream';
import type { JobInstanceResult } from '../types';
import { Duration, ErrorBox, LiveDot, Pager, Table, Time, useAsync, type Column } from '../ui';

const SIZE = 10;

/** Instance ids are `<groupId>-<n>`: the number is what tells them apart. */
export function InstanceLink({ jobId, groupId }: { jobId: string; groupId?: string }) {
  const label = groupId && jobId.startsWith(`${groupId}-`) ? `#${jobId.slice(groupId.length + 1)}` : jobId;
  return (
    <a href={href(`/jobs/${encodeURIComponent(jobId)}`)} title={jobId}>
      {label}
    </a>
  );
}

const outcome = (r: JobInstanceResult) =>
  !r.endTime ? (
    <span class="badge badge-running">RUNNING</span>
  ) : r.error ? (
    <span class="result-text error-text" title={r.error.message}>
      {r.error.message}
    </span>
  ) : (
    <span class="result-text" title={r.result ?? ''}>
      {r.result ?? <span class="muted">no result</span>}
    </span>
  );

const COLUMNS: Column<JobInstanceResult>[] = [
  { label: 'Started', sort: 'startTime', render: (r) => <Time ms={r.startTime} /> },
  { label: 'Job class', sort: 'jobClass', render: (r) => r.jobClass ?? <span class="muted">code</span> },
  {
    label: 'Config',
    class: 'hide-narrow',
    render: (r) => <code class="result-text">{JSON.stringify(r.jobConfig)}</code>,
  },
  { label: 'Outcome', render: outcome },
  { label: 'Took', class: 'num', render: (r) => (r.endTime ? <Duration from={r.startTime} to={r.endTime} /> : '…') },
  {
    label: 'Instance',
    class: 'hide-narrow',
    render: (r) => (r.jobId ? <InstanceLink jobId={r.jobId} groupId={r.groupId} /> : '—'),
  },
];

export function ResultsList({ groupId }: { groupId: string }) {
  const [page, setPage] = useState(0);
  const [sort, setSort] = useState('startTime,desc');
  const list = useAsync(
    (signal) => get<Page<JobInstanceResult>>(`/group/${groupId}/job/result`, { page, size: SIZE, sort }, signal),
    [groupId, page, sort],
  );
  const live = useStream<JobInstanceResult>('/group-job-results', { groupIds: groupId }, (r) =>
    list.setData((prev) => {
      if (!prev) return prev;
      const at = prev.content.findIndex((x) => x.jobInstanceId === r.jobInstanceId);
      if (at >= 0) return { ...prev, content: prev.content.map((x, i) => (i === at ? r : x)) };
      // New executions belong on the first page of the newest-first order.
      if (page !== 0 || sort !== 'startTime,desc') return prev;
      return { ...prev, totalElements: prev.totalElements + 1, content: [r, ...prev.content].slice(0, SIZE) };
    }),
  );
  const data = list.data;
  return (
    <section class="results" aria-label="results">
      <h2>
        Results <LiveDot connected={live} />
      </h2>
      <ErrorBox error={list.error} />
      <Table
        columns={COLUMNS}
        rows={data?.content ?? []}
        rowKey={(r) => r.jobInstanceId}
        sort={sort}
        onSort={(s) => {
          setSort(s);
          setPage(0);
        }}
        empty={list.loading && !data ? 'Loading…' : 'No executions yet.'}
        caption="results of the group's executions"
      />
      {data && (
        <Pager
          page={page}
          totalPages={Math.max(1, Math.ceil(data.totalElements / SIZE))}
          total={data.totalElements}
          onPage={setPage}
        />
      )}
    </section>
  );
}
