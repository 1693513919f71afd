// The query history (GET /sql/history, paged, newest first), kept live by the `/sql-history` stream: a new
// statement appears at the top of the first page as it starts, and its row changes state when it ends.
// "Open" copies a statement into the editor.
import { useState } from 'preact/hooks';
import { get, type Page } from '../api';
import { useStream } from '../stream';
import { Button, Duration, ErrorBox, LiveDot, Pager, Table, Time, useAsync, type Column } from '../ui';
import { ENGINE_LABEL, SqlStateBadge, type SqlHistoryEntry } from './sql-common';

const SIZE = 10;

export function HistoryPanel({ onOpen }: { onOpen: (e: SqlHistoryEntry) => void }) {
  const [page, setPage] = useState(0);
  const [search, setSearch] = useState('');
  const list = useAsync(
    (signal) => get<Page<SqlHistoryEntry>>('/sql/history', { page, size: SIZE, search }, signal),
    [page, search],
  );
  const live = useStream<SqlHistoryEntry>('/sql-history', {}, (entry) =>
    list.setData((prev) => {
      if (!prev) return prev;
      const at = prev.content.findIndex((x) => x.id === entry.id);
      if (at >= 0) return { ...prev, content: prev.content.map((x, i) => (i === at ? entry : x)) };
      // A new statement: on the first page of the unfiltered list it goes on top.
      if (page !== 0 || search) return prev;
      const content = [entry, ...prev.content].slice(0, SIZE);
      const totalElements = prev.totalElements + 1;
      return { ...prev, content, totalElements, totalPages: Math.ceil(totalElements / SIZE) };
    }),
  );

  const columns: Column<SqlHistoryEntry>[] = [
    { label: 'Started', class: 'sql-nowrap hide-narrow', render: (e) => <Time ms={e.creationTime} /> },
    { label: 'State', render: (e) => <SqlStateBadge state={e.state} /> },
    {
      label: 'Statement',
      class: 'sql-stmt-cell',
      render: (e) => (
        <div class="sql-history-statement">
          <code title={e.statement}>{e.statement}</code>
          <span class="muted">
            {ENGINE_LABEL[e.engine]} · {e.clusterName}
          </span>
          {e.error && (
            <span class="error-text" title={e.error}>
              {e.error}
            </span>
          )}
        </div>
      ),
    },
    { label: 'Rows', class: 'num hide-narrow', render: (e) => (e.rows === undefined ? '—' : e.rows) },
    {
      label: 'Took',
      class: 'num sql-nowrap hide-narrow',
      render: (e) =>
        e.completionTime ? (
          <Duration from={e.startTime ?? e.creationTime} to={e.completionTime} />
        ) : (
          <span class="muted">…</span>
        ),
    },
    {
      label: 'Actions',
      render: (e) => (
        <Button aria-label="Open in the editor" title="Open in the editor" onClick={() => onOpen(e)}>
          Open
        </Button>
      ),
    },
  ];

  return (
    <section class="panel sql-history" aria-labelledby="sql-history-title">
      <header class="sql-panel-header">
        <h2 id="sql-history-title">
          Query history
          <LiveDot connected={live} />
        </h2>
        <input
          type="search"
          aria-label="Search the history"
          placeholder="Search statements"
          value={search}
          onInput={(e) => {
            setSearch(e.currentTarget.value);
            setPage(0);
          }}
        />
      </header>
      <ErrorBox error={list.error} />
      <Table
        caption="Query history"
        columns={columns}
        rows={list.data?.content ?? []}
        rowKey={(e) => e.id}
        empty={list.loading && !list.data ? 'Loading…' : 'No statements yet.'}
      />
      {list.data && (
        <Pager page={page} totalPages={list.data.totalPages} total={list.data.totalElements} onPage={setPage} />
      )}
    </section>
  );
}
