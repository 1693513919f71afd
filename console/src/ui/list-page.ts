// What the jobs, groups and schedules list pages share: a server-paged list read with the view's query, its
// rows patched in place by stream events and read again after a stream reconnect (Socket.IO has no resume),
// and, for pages that keep their view in memory, the view itself (a filter change returns to the first page).
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, type Page } from '../api';
import { useAsync, type Async } from './data';

export interface PagedList<T> extends Async<Page<T>> {
  /** Applies `f` to every row of the page shown (a stream event about one of them). */
  patchRows(f: (row: T) => T): void;
}

/** A page with no rows: what a list shows when its filter can match nothing (the service would not say so). */
const emptyPage = <T>(size: number): Page<T> => ({
  content: [],
  totalElements: 0,
  totalPages: 0,
  first: true,
  last: true,
  empty: true,
  page: { number: 0, size, offset: 0, paged: true },
});

/**
 * GET `path` with `query` (its `page`, `size` and `sort` included), read again whenever the query changes.
 * `query` undefined: nothing can match, an empty page of `size` without a call.
 */
export function usePagedList<T>(
  path: string,
  query: Record<string, string | number | string[] | undefined> | undefined,
  size: number,
): PagedList<T> {
  const list = useAsync(
    (signal) => (query ? get<Page<T>>(path, query, signal) : Promise.resolve(emptyPage<T>(size))),
    [JSON.stringify(query ?? null)],
  );
  const patchRows = (f: (row: T) => T) => list.setData((prev) => prev && { ...prev, content: prev.content.map(f) });
  return { ...list, patchRows };
}

/** Reads the list again each time its stream is `live` again: events of the gap are not replayed. */
export function useRereadOnReconnect(live: boolean, list: Async<unknown>): void {
  const wasLive = useRef(false);
  useEffect(() => {
    if (live && !wasLive.current && list.data) list.reload();
    wasLive.current = live;
  }, [live]);
}

/** A list page's view kept in memory: page, sort, search word and one state filter. */
export interface ListView {
  page: number;
  sort: string;
  search: string;
  state: string;
}

/** The view and `go`, which changes it: any change but of the page itself returns to the first page. */
export function useListView(initial: Omit<ListView, 'page' | 'search'>): {
  view: ListView;
  go(change: Partial<ListView>): void;
} {
  const [view, setView] = useState<ListView>({ page: 0, search: '', ...initial });
  return { view, go: (change) => setView((v) => ({ ...v, page: 0, ...change })) };
}
