// 4.26 Execute an SQL statement: on the cluster's running engine of the requested type (started and
// waited for when there is none), through a pooled session, recorded in the query history.
// A statement the engine refuses answers 200 with info.state ERROR; only client mistakes are 4xx.
import { randomUUID } from 'node:crypto';
import type { Document } from 'mongodb';
import { SqlEngineState, type SqlEngineRecord } from '../../../domain/sql-engine';
import type { SqlHistoryEntry, SqlStatementCreation, SqlStatementResult } from '../../../domain/sql';
import type { SqlEngine } from '../../../domain/states';
import { logger } from '../../../lib/log';
import type { StatementOutcome } from '../../../lib/sql/types';
import { getClusterDoc } from '../../clusters/service';
import type { ApiDeps } from '../../deps';
import { ApiError, conflict, overLimit } from '../../errors';
import { ensureEngine, failedMessage, runningEngine } from '../engines/service';
import type { ResultBody } from './result-body';
import type { SqlRuntime } from './runtime';

const log = logger('sql');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A statement still running after this long gets a RUNNING record in the history (and its stream). */
const RUNNING_RECORD_AFTER_MS = 200;

type Deps = ApiDeps & { sql: SqlRuntime };

/** The running engine of a cluster and type: cached, else the read model, else started and waited for. */
async function engineFor(deps: Deps, clusterId: string, type: SqlEngine): Promise<SqlEngineRecord> {
  const cached = deps.sql.cached(clusterId, type);
  if (cached) return cached;
  let r = await runningEngine(deps, clusterId, type);
  if (!r) {
    const cluster = await getClusterDoc(deps, clusterId);
    r = await ensureEngine(deps, cluster, type, { force: false, wait: true });
    if (r.state !== SqlEngineState.RUNNING || !r.endpoint) throw conflict(failedMessage(r));
  }
  deps.sql.remember(r);
  return r;
}

/** How long a broken session waits for the workflow to see its engine die (it polls every WATCH_INTERVAL_MS). */
const DEATH_NOTICE_MS = 5_000;

/**
 * After a session broke on `dead`: the engine to run the statement on again, if the engine died (then the
 * statement died with it); undefined if the engine still runs, since the statement may then have run.
 */
async function replacementOf(deps: Deps, dead: SqlEngineRecord): Promise<SqlEngineRecord | undefined> {
  deps.sql.forget(dead);
  const deadline = Date.now() + DEATH_NOTICE_MS;
  while (Date.now() < deadline) {
    const r = await runningEngine(deps, dead.clusterId, dead.type);
    if (!r) return engineFor(deps, dead.clusterId, dead.type);
    if (r.generation !== dead.generation) return r;
    await sleep(250);
  }
  return undefined;
}

async function runOn(deps: Deps, body: SqlStatementCreation, timeoutMs: number, signal: AbortSignal, out: ResultBody) {
  let engine = await engineFor(deps, body.clusterId, body.engine);
  const opts = { maxRows: body.maxRows, timeoutMs, signal, sink: out };
  for (let attempt = 1; ; attempt++) {
    deps.sql.touch(engine);
    try {
      return { engine, outcome: await deps.sql.pools[body.engine].run(engine.endpoint!, body.statement, opts) };
    } catch (e) {
      const broke = `the session with the ${body.engine} engine broke (${(e as Error).message})`;
      if (attempt >= 2 || signal.aborted) throw conflict(broke);
      // Rows already sent cannot be sent again.
      if (!out.restart()) throw conflict(`${broke} after part of the result was sent`);
      // Engine died or restarted: once more on the engine the workflow runs now.
      const next = await replacementOf(deps, engine);
      if (!next)
        throw conflict(`${broke}; the engine still runs, so the statement may have run: check before running it again`);
      log.warn('SQL session broke with its engine; running the statement on the new one', {
        engineId: engine.id,
        err: String(e),
      });
      engine = next;
    }
  }
}

/** The history record of a statement, as stored (SqlHistoryEntry plus _id). */
function historyDoc(
  id: string,
  body: SqlStatementCreation,
  e: SqlEngineRecord | undefined,
  o?: StatementOutcome,
  rows = 0,
): SqlHistoryEntry & Document {
  const info = o?.info;
  return {
    _id: id,
    id,
    clusterId: body.clusterId,
    clusterName: e?.clusterName ?? '',
    engine: body.engine,
    engineId: e?.id ?? '',
    statement: body.statement,
    state: info?.state ?? 'RUNNING',
    creationTime: info?.creationTime ?? Date.now(),
    ...(info?.startTime !== undefined ? { startTime: info.startTime } : {}),
    ...(info?.completionTime !== undefined ? { completionTime: info.completionTime } : {}),
    ...(o ? { rows } : {}),
    maxRows: body.maxRows,
    ...(info?.exception ? { error: info.exception } : {}),
  };
}

/**
 * Runs the statement, its rows going to `out` as they arrive; resolves the rest of the answer. A streamed
 * answer (out.streaming) is the caller's to end: out.finish() if FINISHED, else out.fail().
 */
export async function executeStatement(
  deps: Deps,
  body: SqlStatementCreation & { timeoutMs?: number },
  signal: AbortSignal,
  out: ResultBody,
): Promise<Omit<SqlStatementResult, 'rows'>> {
  const { config } = deps;
  if (body.maxRows > config.SQL_MAX_ROWS) {
    throw overLimit(`maxRows: ${body.maxRows} is above this service's limit of ${config.SQL_MAX_ROWS} (SQL_MAX_ROWS)`);
  }
  const timeoutMs = Math.min(body.timeoutMs ?? config.SQL_STATEMENT_TIMEOUT_MS, config.SQL_STATEMENT_TIMEOUT_MS);
  const id = randomUUID().replace(/-/g, '');
  const creationTime = out.creationTime;
  // History costs the answer nothing: records go through the process's batched writer, a RUNNING one
  // only for a statement still running after RUNNING_RECORD_AFTER_MS (most take less).
  let recorded = false;
  // The id's first record is inserted, a later one replaces it.
  const write = (doc: Document) => {
    deps.sql.history.put({ ...doc, _id: id }, !recorded);
    recorded = true;
  };
  const timer = setTimeout(
    () => write({ ...historyDoc(id, body, deps.sql.cached(body.clusterId, body.engine)), creationTime }),
    RUNNING_RECORD_AFTER_MS,
  );
  let result: Awaited<ReturnType<typeof runOn>>;
  try {
    result = await runOn(deps, body, timeoutMs, signal, out);
  } catch (e) {
    // The engine could not run it (409), or a RUNNING record must not stay RUNNING: an ERROR record.
    if ((e instanceof ApiError && e.status === 409) || recorded) {
      const exception = e instanceof ApiError ? e.message : 'the statement could not be run';
      const info = { state: 'ERROR' as const, creationTime, completionTime: Date.now(), exception };
      write(historyDoc(id, body, undefined, { info, columns: [], rows: [], logs: [] }));
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
  const { engine, outcome } = result;
  const info = { ...outcome.info, creationTime };
  // Rows the client got: all of a FINISHED result; of another, those a streamed body had already sent.
  const rows = info.state === 'FINISHED' || out.streaming ? out.count : 0;
  write(historyDoc(id, body, engine, { ...outcome, info }, rows));
  return { info, columns: outcome.columns, logs: outcome.logs };
}
