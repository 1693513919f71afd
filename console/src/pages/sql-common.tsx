// What the SQL workspace and the notebook page share: the SQL resource types (type-only, from domain/sql.ts),
// the clusters to run on, the run settings (cluster, engine, maxRows) with their controls, and one call of
// POST /sql/execute that the user can cancel (the service cancels the statement when the request goes away).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, get, type Page } from '../api';
import type { Cluster } from '../types';
import { Button, ErrorBox, errorText, Field, useAsync } from '../ui';

export type {
  SqlEngineInfo,
  SqlHistoryEntry,
  SqlNotebook,
  SqlSaved,
  SqlStatementResult,
  SqlColumn,
} from '../../../domain/sql';
import type { SqlStatementResult } from '../../../domain/sql';

/** The engine types, as the API names them (domain/states.ts SQL_ENGINES). */
export const ENGINES = ['SPARK_SQL', 'TRINO'] as const;
export type Engine = (typeof ENGINES)[number];
export const ENGINE_LABEL: Record<Engine, string> = { SPARK_SQL: 'Spark SQL', TRINO: 'Trino' };

/** Where and how a statement runs. `maxRows` is kept as typed, and checked as the API checks it. */
export interface RunSettings {
  clusterId: string;
  engine: Engine;
  maxRows: string;
}

export const DEFAULT_SETTINGS: RunSettings = { clusterId: 'default', engine: 'SPARK_SQL', maxRows: '1000' };

/** The API's rule for maxRows (a whole number ≥ 1); undefined when valid. */
export function maxRowsError(v: string): string | undefined {
  return /^\s*\d+\s*$/.test(v) && Number(v) >= 1 ? undefined : 'maxRows: must be a whole number of at least 1';
}

/** Every cluster (id and name), for the cluster selectors. */
export function useClusters() {
  return useAsync(
    (signal) => get<Page<Cluster>>('/cluster', { size: 1000, sort: 'name,asc' }, signal).then((p) => p.content),
    [],
  );
}

/** Runs one statement; rejects with ApiError (4xx) or AbortError (cancelled by the user). */
export function execute(statement: string, s: RunSettings, signal: AbortSignal): Promise<SqlStatementResult> {
  return api<SqlStatementResult>(
    'POST',
    '/sql/execute',
    { statement, clusterId: s.clusterId, engine: s.engine, maxRows: Number(s.maxRows) },
    { signal },
  );
}

/** One statement at a time: its result or the API's refusal, and a way to cancel it while it runs. */
export interface Runner {
  running: boolean;
  result?: SqlStatementResult;
  /** The API's message when it refused the call (a 4xx), e.g. a bad maxRows or an engine that failed to start. */
  error?: string;
  /** The maxRows the shown result was fetched with. */
  maxRows?: number;
  run(statement: string, s: RunSettings): void;
  cancel(): void;
}

export function useRunner(): Runner {
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<SqlStatementResult>();
  const [error, setError] = useState<string>();
  const [maxRows, setMaxRows] = useState<number>();
  const ctl = useRef<AbortController>();
  useEffect(() => () => ctl.current?.abort(), []);
  return {
    running,
    result,
    error,
    maxRows,
    run(statement, s) {
      const bad = maxRowsError(s.maxRows);
      if (bad) {
        setError(bad);
        return;
      }
      ctl.current?.abort();
      const mine = (ctl.current = new AbortController());
      setRunning(true);
      setError(undefined);
      execute(statement, s, mine.signal).then(
        (r) => {
          if (mine.signal.aborted) return;
          setResult(r);
          setMaxRows(Number(s.maxRows));
          setRunning(false);
        },
        (err: unknown) => {
          if (mine.signal.aborted) return;
          setResult(undefined);
          setError(errorText(err));
          setRunning(false);
        },
      );
    },
    cancel() {
      ctl.current?.abort();
      setRunning(false);
      setError('cancelled: the service cancels the statement in the engine');
    },
  };
}

/** Cluster, engine and maxRows controls. */
export function RunSettingsFields({
  value,
  onChange,
  clusters,
}: {
  value: RunSettings;
  onChange: (s: RunSettings) => void;
  clusters: Pick<Cluster, 'id' | 'name'>[] | undefined;
}) {
  const known = clusters ?? [];
  const options = known.some((c) => c.id === value.clusterId)
    ? known
    : [{ id: value.clusterId, name: value.clusterId }, ...known];
  return (
    <div class="sql-settings">
      <Field label="Cluster">
        <select value={value.clusterId} onChange={(e) => onChange({ ...value, clusterId: e.currentTarget.value })}>
          {options.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Engine">
        <select value={value.engine} onChange={(e) => onChange({ ...value, engine: e.currentTarget.value as Engine })}>
          {ENGINES.map((e) => (
            <option key={e} value={e}>
              {ENGINE_LABEL[e]}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Max rows" error={maxRowsError(value.maxRows)}>
        <input
          class="sql-maxrows"
          inputMode="numeric"
          value={value.maxRows}
          onInput={(e) => onChange({ ...value, maxRows: e.currentTarget.value })}
        />
      </Field>
    </div>
  );
}

/** Whether a key event is the "run" shortcut: Ctrl+Enter, or Cmd+Enter on a Mac. */
export const isRunKey = (e: KeyboardEvent): boolean => e.key === 'Enter' && (e.ctrlKey || e.metaKey);

const STATE_KIND: Record<string, string> = {
  FINISHED: 'ok',
  RUNNING: 'running',
  ERROR: 'bad',
  FAILED: 'bad',
  TIMEDOUT: 'warn',
  STARTING: 'pending',
  CANCELED: 'muted',
};

/** A statement's or an engine's state as a badge (the kit's colours; ui.tsx's table lacks these states). */
export function SqlStateBadge({ state }: { state: string }) {
  return <span class={`badge badge-${STATE_KIND[state] ?? 'muted'}`}>{state}</span>;
}

/** A small local state that survives navigation within the tab (sessionStorage), e.g. the editor's draft. */
export function useStored<T>(key: string, initial: T): [T, (v: T) => void] {
  const full = `spark-orchestrator.${key}`;
  const [value, setValue] = useState<T>(() => {
    try {
      const raw = sessionStorage.getItem(full);
      return raw ? { ...initial, ...(JSON.parse(raw) as T) } : initial;
    } catch {
      return initial;
    }
  });
  return [
    value,
    (v: T) => {
      setValue(v);
      sessionStorage.setItem(full, JSON.stringify(v));
    },
  ];
}

/** A one-field form (a name) that shows the API's refusal under it. */
export function NameForm({
  label,
  submit,
  initial = '',
  onCancel,
  onSubmit,
}: {
  label: string;
  submit: string;
  initial?: string;
  onCancel: () => void;
  onSubmit: (name: string) => Promise<void>;
}) {
  const [name, setName] = useState(initial);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="sql-inline-form"
      aria-label={label}
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          await onSubmit(name);
        } catch (err) {
          setError(errorText(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <input
        aria-label={label}
        value={name}
        autoFocus
        maxLength={255}
        onInput={(e) => setName(e.currentTarget.value)}
      />
      <Button type="submit" variant="primary" busy={busy}>
        {submit}
      </Button>
      <Button onClick={onCancel}>Cancel</Button>
      <ErrorBox error={error} />
    </form>
  );
}
