// The console's small component kit, shared by every page: loading and error states, state badges, times,
// buttons that confirm, form fields, sortable tables, a pager, toasts, tabs and a dialog. Styles: styles.css.
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Page } from './api';

// ---- data loading ----------------------------------------------------------------------------------------

export interface Async<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload(): void;
  /** Replace the data locally, e.g. with a stream event. */
  setData(update: T | ((prev: T | undefined) => T | undefined)): void;
}

/** Runs `load` on mount and whenever `deps` change; the previous data stays shown while reloading. */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Async<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    setLoading(true);
    load(ctl.signal).then(
      (d) => {
        if (ctl.signal.aborted) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (ctl.signal.aborted) return;
        setError(errorText(err));
        setLoading(false);
      },
    );
    return () => ctl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload, setData: setData as Async<T>['setData'] };
}

/** Re-runs `fn` every `ms` while mounted (and the tab is visible). */
export function useInterval(fn: () => void, ms: number): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    const id = setInterval(() => {
      if (document.visibilityState === 'visible') ref.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms]);
}

export const errorText = (err: unknown): string =>
  err instanceof ApiError ? err.message : err instanceof Error ? err.message : String(err);

// ---- feedback -------------------------------------------------------------------------------------------

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function ErrorBox({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <div class="error-box" role="alert">
      {error}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty muted">{children}</p>;
}

type Toast = { id: number; text: string; kind: 'ok' | 'error' };
let toastListener: ((t: Toast) => void) | undefined;
let toastSeq = 0;

/** Shows a short message at the bottom of the screen: the result of an action. */
export function notify(text: string, kind: 'ok' | 'error' = 'ok'): void {
  toastListener?.({ id: ++toastSeq, text, kind });
}

export function Toasts() {
  const [toasts, setToasts] = useState<Toast[]>([]);
  useEffect(() => {
    toastListener = (t) => {
      setToasts((all) => [...all.slice(-3), t]);
      setTimeout(() => setToasts((all) => all.filter((x) => x.id !== t.id)), t.kind === 'error' ? 8000 : 4000);
    };
    return () => (toastListener = undefined);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

/** Runs an action, toasts its outcome, and returns whether it succeeded. */
export async function act(what: string, fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    notify(what);
    return true;
  } catch (err) {
    notify(errorText(err), 'error');
    return false;
  }
}

// ---- values ---------------------------------------------------------------------------------------------

const STATE_CLASS: Record<string, string> = {
  SUBMITTED: 'pending',
  STARTING: 'pending',
  READY: 'ok',
  BUSY: 'running',
  FINISHED: 'ok',
  FAILED: 'bad',
  CANCELED: 'muted',
  UNKNOWN: 'warn',
  ACTIVE: 'ok',
  ARCHIVED: 'muted',
  ENABLED: 'ok',
  PAUSED: 'warn',
  DISABLED: 'muted',
  RUNNING: 'running',
  SUCCEEDED: 'ok',
};

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge badge-${STATE_CLASS[state] ?? 'muted'}`}>{state}</span>;
}

/** A point in time: local date and time, the exact ISO time on hover. */
export function Time({ ms }: { ms?: number | null }) {
  if (!ms) return <span class="muted">—</span>;
  const d = new Date(ms);
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()}>
      {d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })}
    </time>
  );
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m % 60} min`;
}

export function Duration({ from, to }: { from?: number | null; to?: number | null }) {
  if (!from) return <span class="muted">—</span>;
  return <span class="num">{formatDuration((to ?? Date.now()) - from)}</span>;
}

// ---- actions and forms ----------------------------------------------------------------------------------

type ButtonProps = JSX.HTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'danger' | 'plain';
  busy?: boolean;
  type?: 'button' | 'submit';
  disabled?: boolean;
};

export function Button({ variant = 'plain', busy, children, disabled, type = 'button', ...rest }: ButtonProps) {
  return (
    <button {...rest} type={type} class={`btn btn-${variant} ${rest.class ?? ''}`} disabled={disabled || busy}>
      {busy ? '…' : children}
    </button>
  );
}

/**
 * A destructive action in two steps: the first click asks, the second (on "Yes") acts. Keyboard: Escape or
 * "No" backs out. Hidden when `hidden` (e.g. the user's role may not do it).
 */
export function ConfirmButton({
  label,
  question,
  onConfirm,
  variant = 'danger',
  hidden,
}: {
  label: string;
  question: string;
  onConfirm: () => Promise<unknown> | void;
  variant?: 'danger' | 'primary' | 'plain';
  hidden?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (hidden) return null;
  if (!asking)
    return (
      <Button variant={variant} onClick={() => setAsking(true)}>
        {label}
      </Button>
    );
  return (
    <span class="confirm" role="group" aria-label={question} onKeyDown={(e) => e.key === 'Escape' && setAsking(false)}>
      <span>{question}</span>
      <Button
        variant={variant}
        busy={busy}
        autoFocus
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        Yes, {label.toLowerCase()}
      </Button>
      <Button onClick={() => setAsking(false)}>No</Button>
    </span>
  );
}

/** A labelled form control with an optional hint and the validation error the service gave for it. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: string;
  error?: string;
  children: ComponentChildren;
}) {
  // The hint and error sit beside the label, not in it: the control's accessible name is the label alone.
  return (
    <div class={`field ${error ? 'field-error' : ''}`}>
      <label class="field-control">
        <span class="field-label">{label}</span>
        {children}
      </label>
      {hint && !error && <span class="field-hint">{hint}</span>}
      {error && <span class="field-hint error-text">{error}</span>}
    </div>
  );
}

// ---- lists ----------------------------------------------------------------------------------------------

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

// ---- layout ---------------------------------------------------------------------------------------------

export function PageHeader({
  title,
  children,
  live,
}: {
  title: ComponentChildren;
  children?: ComponentChildren;
  /** Shows whether the page's stream is connected. */
  live?: boolean;
}) {
  return (
    <header class="page-header">
      <h1>
        {title}
        {live !== undefined && <LiveDot connected={live} />}
      </h1>
      {children && <div class="actions">{children}</div>}
    </header>
  );
}

export function LiveDot({ connected }: { connected: boolean }) {
  return (
    <span class={`live ${connected ? 'live-on' : 'live-off'}`} title={connected ? 'live' : 'not live: reconnecting'}>
      <span class="sr-only">{connected ? 'live' : 'not live'}</span>
    </span>
  );
}

export function Tabs<K extends string>({
  tabs,
  active,
  onChange,
}: {
  tabs: { key: K; label: string }[];
  active: K;
  onChange: (k: K) => void;
}) {
  return (
    <div class="tabs" role="tablist">
      {tabs.map((t) => (
        <button
          key={t.key}
          type="button"
          role="tab"
          aria-selected={t.key === active}
          class={t.key === active ? 'tab tab-active' : 'tab'}
          onClick={() => onChange(t.key)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

/** A modal dialog (the platform's <dialog>: focus is trapped, Escape closes). */
export function Dialog({
  open,
  title,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-label={title}>
      <header class="dialog-header">
        <h2>{title}</h2>
        <Button onClick={onClose} aria-label="close">
          ×
        </Button>
      </header>
      {open && children}
    </dialog>
  );
}

/** Pretty JSON or text in a scrollable block. */
export function Pre({ value, label }: { value: unknown; label?: string }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return (
    <pre class="pre" aria-label={label} tabIndex={0}>
      {text}
    </pre>
  );
}
