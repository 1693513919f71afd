// Lists: a sortable table, a pager, a word search, and a server-paged table of all three.
import type { ComponentChildren } from 'preact';
import type { Page } from '../api';
import type { Async } from './data';
import { ErrorBox } from './feedback';
import { Button } from './forms';

export interface Column<T> {
  label: string;
  /** The API's sort field, when the list can be sorted by this column. */
  sort?: string;
  render: (row: T) => ComponentChildren;
  /** CSS class of the cells, e.g. `num` for right-aligned figures, `hide-narrow` to drop it on a phone. */
  class?: string;
}

/** `sort` is the API's `field,asc|desc`. Clicking a sortable header toggles the direction. */
export function Table<T>({
  columns,
  rows,
  rowKey,
  sort,
  onSort,
  empty = 'Nothing here yet.',
  caption,
}: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  sort?: string;
  onSort?: (sort: string) => void;
  empty?: string;
  caption?: string;
}) {
  const [field, dir] = (sort ?? '').split(',');
  return (
    <div class="table-wrap">
      <table>
        {caption && <caption class="sr-only">{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => {
              const active = c.sort && c.sort === field;
              const ariaSort = active ? (dir === 'asc' ? 'ascending' : 'descending') : undefined;
              return (
                <th key={c.label} class={c.class} aria-sort={ariaSort} scope="col">
                  {c.sort && onSort ? (
                    <button
                      type="button"
                      class="th-sort"
                      onClick={() => onSort(`${c.sort},${active && dir === 'desc' ? 'asc' : 'desc'}`)}
                    >
                      {c.label}
                      <span aria-hidden="true">{active ? (dir === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                    </button>
                  ) : (
                    c.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} class="muted">
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((r) => (
              <tr key={rowKey(r)}>
                {columns.map((c) => (
                  <td key={c.label} class={c.class}>
                    {c.render(r)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Pager({
  page,
  totalPages,
  total,
  onPage,
}: {
  page: number;
  totalPages: number;
  total?: number;
  onPage: (page: number) => void;
}) {
  if (totalPages <= 1) return total !== undefined ? <p class="pager muted">{total} in all</p> : null;
  return (
    <nav class="pager" aria-label="pages">
      <Button disabled={page <= 0} onClick={() => onPage(page - 1)}>
        ← Previous
      </Button>
      <span class="muted">
        page {page + 1} of {totalPages}
        {total !== undefined ? ` · ${total} in all` : ''}
      </span>
      <Button disabled={page >= totalPages - 1} onClick={() => onPage(page + 1)}>
        Next →
      </Button>
    </nav>
  );
}

/** A list's word search: each change goes to `onChange` (the page usually returns to page 0 with it). */
export function SearchField({
  value,
  placeholder = 'name or description',
  onChange,
}: {
  value: string;
  placeholder?: string;
  onChange: (value: string) => void;
}) {
  return (
    <label class="field">
      <span class="field-label">Search</span>
      <input type="search" value={value} placeholder={placeholder} onChange={(e) => onChange(e.currentTarget.value)} />
    </label>
  );
}

/** A server-paged list: its error, the table and the pager under it. `noun` names the rows ("groups"). */
export function PagedTable<T>({
  list,
  noun,
  page,
  onPage,
  ...table
}: {
  list: Async<Page<T>>;
  noun: string;
  page: number;
  onPage: (page: number) => void;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  sort?: string;
  onSort?: (sort: string) => void;
}) {
  const data = list.data;
  return (
    <>
      <ErrorBox error={list.error} />
      <Table
        {...table}
        rows={data?.content ?? []}
        empty={list.loading && !data ? 'Loading…' : `No ${noun}.`}
        caption={noun}
      />
      {data && <Pager page={page} totalPages={data.totalPages} total={data.totalElements} onPage={onPage} />}
    </>
  );
}
