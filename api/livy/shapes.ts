// Livy's view of our resources, pure: session, batch and statement states from group, job and execution
// records; statement output ({status, data, ename, evalue, traceback}); the code an `sql` statement runs;
// Livy's log paging. The HTTP layer (routes.ts) and the services (sessions.ts, batches.ts) use these.
import type { JobInstanceResult } from '../../domain/resources';
import { GroupState, JobState, Language } from '../../domain/states';

/** Session kinds this API runs, and the group language of each (sql runs through spark.sql in Python). */
export const SESSION_KINDS = { pyspark: Language.PYTHON, spark: Language.SCALA, sql: Language.PYTHON } as const;
export type SessionKind = keyof typeof SESSION_KINDS;
export const STATEMENT_KINDS = ['pyspark', 'spark', 'sql'] as const;
export type StatementKind = (typeof STATEMENT_KINDS)[number];

/** Livy's session and batch states (its SessionState), of which we use a subset. */
export type LivyState =
  'not_started' | 'starting' | 'idle' | 'busy' | 'shutting_down' | 'running' | 'success' | 'dead' | 'killed';

/** A batch (a single job) in Livy's words. */
export function batchState(state: string): LivyState {
  switch (state) {
    case JobState.SUBMITTED:
    case JobState.STARTING:
      return 'starting';
    case JobState.FINISHED:
      return 'success';
    case JobState.FAILED:
      return 'dead';
    case JobState.CANCELED:
      return 'killed';
    default:
      // READY, BUSY, and UNKNOWN (the driver's state could not be read): the application is still there.
      return 'running';
  }
}

/** A session (a CODE group of scale 1) from its group record and the states of its live instances. */
export function sessionState(group: { state: string; paused?: boolean }, instanceStates: string[]): LivyState {
  if (group.state === GroupState.ARCHIVED) return 'dead';
  if (group.paused === true) return 'not_started';
  if (instanceStates.includes(JobState.BUSY)) return 'busy';
  if (instanceStates.includes(JobState.READY)) return 'idle';
  return 'starting';
}

/** The kind a statement runs as: its own, else its session's; whether the session's language runs it. */
export function statementKindOf(session: SessionKind, requested: StatementKind | undefined): StatementKind {
  const kind = requested ?? session;
  const language = SESSION_KINDS[session];
  const runs = language === Language.PYTHON ? kind === 'pyspark' || kind === 'sql' : kind === 'spark';
  if (!runs) throw new Error(`a ${session} session runs ${language === Language.PYTHON ? 'pyspark and sql' : 'spark'}`);
  return kind;
}

/** Rows an `sql` statement returns at most (Livy's spark.livy.sql.max-result default). */
export const SQL_MAX_ROWS = 1000;

/**
 * Python that runs an `sql` statement and evaluates to Livy's application/json result: the schema as
 * Spark writes it and the rows as arrays. A JSON string is a valid Python string literal.
 */
export function sqlAsPython(sql: string): string {
  return [
    'import json as _livy_json',
    `_livy_df = spark.sql(${JSON.stringify(sql)})`,
    '_livy_plain = lambda v: v if v is None or isinstance(v, (bool, int, float, str)) else str(v)',
    `_livy_rows = [[_livy_plain(v) for v in r] for r in _livy_df.take(${SQL_MAX_ROWS})]`,
    '_livy_json.dumps({"schema": _livy_json.loads(_livy_df.schema.json()), "data": _livy_rows})',
  ].join('\n');
}

export type StatementState = 'waiting' | 'running' | 'available' | 'error' | 'cancelling' | 'cancelled';

export interface StatementOutput {
  status: 'ok' | 'error';
  execution_count: number;
  data?: Record<string, unknown>;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

/** Splits `Type: message` (how the runner words Python and JVM errors) into Livy's ename and evalue. */
export function errorParts(message: string): { ename: string; evalue: string } {
  const m = /^([A-Za-z_][\w.$]*): ([\s\S]*)$/.exec(message);
  return m ? { ename: m[1], evalue: m[2] } : { ename: 'Error', evalue: message };
}

/** Lines of a stack trace, each keeping its line end, as Livy (and IPython) list them. */
export const tracebackLines = (stackTrace: string): string[] => stackTrace.match(/[^\n]*\n|[^\n]+$/g) ?? [];

/** The output of a finished execution; `sql` statements parse their JSON result. */
export function statementOutput(count: number, kind: StatementKind, r: JobInstanceResult): StatementOutput {
  if (r.error) {
    return {
      status: 'error',
      execution_count: count,
      ...errorParts(r.error.message),
      traceback: tracebackLines(r.error.stackTrace),
    };
  }
  const text = r.result ?? '';
  if (kind === 'sql') {
    try {
      return { status: 'ok', execution_count: count, data: { 'application/json': JSON.parse(text) as unknown } };
    } catch {
      // not the JSON sqlAsPython produces: shown as text
    }
  }
  return { status: 'ok', execution_count: count, data: { 'text/plain': text } };
}

/** A statement from its execution's record (absent until the execution is announced) and its cancel mark. */
export function statementView(
  s: { id: number; code: string; kind: StatementKind; cancelled?: boolean },
  r: JobInstanceResult | undefined,
) {
  const done = r?.endTime !== undefined;
  const state: StatementState = done ? 'available' : s.cancelled ? 'cancelled' : r ? 'running' : 'waiting';
  return {
    id: s.id,
    code: s.code,
    state,
    output: done && r ? statementOutput(s.id, s.kind, r) : null,
    progress: done ? 1 : 0,
    started: r?.startTime ?? 0,
    completed: done ? r.endTime! : 0,
  };
}

/**
 * Livy's log paging over all lines: `size` lines from `from`; without `from`, the last `size`
 * (default 100); a negative size means all.
 */
export function logPage(lines: string[], from: number | undefined, size: number | undefined) {
  let n = size ?? 100;
  let start = from ?? -1;
  if (n < 0) {
    start = 0;
    n = lines.length;
  }
  if (start < 0) start = Math.max(0, lines.length - n);
  return { from: start, total: lines.length, log: lines.slice(start, start + n) };
}
