// What one API process keeps for running statements: a session pool per engine protocol, the running
// engines it knows (briefly cached, so a statement costs no database read), and the idle-clock signals
// it sends to engine workflows (at most one per engine per IDLE_SIGNAL_MS).
import type { Client } from '@temporalio/client';
import type { Store } from '../../../lib/mongo';
import { Collections } from '../../../lib/mongo';
import { createHistoryWriter, type HistoryWriter } from './history-writer';
import type { SqlEngineRecord } from '../../../domain/sql-engine';
import type { SqlEngine } from '../../../domain/states';
import type { Config } from '../../../lib/config';
import { logger } from '../../../lib/log';
import { createSqlPool, protocols, type SqlPool } from '../../../lib/sql';
import { engineUsedSignal } from '../../../workflows/sql-engine';
import { sqlEngineWorkflowId } from '../../../domain/sql-engine';

const log = logger('sql');

/** How long a running engine's record is trusted without reading it again. */
const ENGINE_CACHE_MS = 2_000;

export interface SqlRuntime {
  pools: Record<SqlEngine, SqlPool>;
  /** The query history's records, batched. */
  history: HistoryWriter;
  /** A cached RUNNING record of the engine, if fresh. */
  cached(clusterId: string, type: SqlEngine): SqlEngineRecord | undefined;
  remember(r: SqlEngineRecord): void;
  /** Forgets the engine and closes its sessions (it died or was replaced). */
  forget(r: SqlEngineRecord): void;
  /**
   * The engine of this cluster and type was stopped through this process (DELETE, its cluster deleted):
   * forgotten at once, so the next statement starts a new engine instead of trying the stopped one.
   */
  stopped(clusterId: string, type: SqlEngine): void;
  /** Tells the engine's workflow it is in use, throttled. */
  touch(r: SqlEngineRecord): void;
  close(): Promise<void>;
}

export function createSqlRuntime(config: Config, temporal: Client, store: Store): SqlRuntime {
  const poolOpts = { maxSessions: config.SQL_SESSIONS_PER_ENGINE, idleMs: 5 * 60_000 };
  const pools = {
    SPARK_SQL: createSqlPool(protocols.SPARK_SQL, poolOpts),
    TRINO: createSqlPool(protocols.TRINO, poolOpts),
  };
  const engines = new Map<string, { record: SqlEngineRecord; until: number }>();
  const touched = new Map<string, number>();
  const signalEvery = Math.min(60_000, Math.max(1_000, Math.floor(config.SQL_ENGINE_IDLE_MS / 4)));
  const key = (clusterId: string, type: SqlEngine) => `${type}/${clusterId}`;

  const forget = (r: SqlEngineRecord) => {
    engines.delete(key(r.clusterId, r.type));
    if (r.endpoint) pools[r.type].invalidate(r.endpoint);
  };

  const history = createHistoryWriter(() => store.col(Collections.sqlHistory));
  return {
    pools,
    history,
    cached(clusterId, type) {
      const c = engines.get(key(clusterId, type));
      return c && c.until > Date.now() ? c.record : undefined;
    },
    remember(r) {
      engines.set(key(r.clusterId, r.type), { record: r, until: Date.now() + ENGINE_CACHE_MS });
    },
    forget,
    stopped(clusterId, type) {
      const c = engines.get(key(clusterId, type));
      if (c) forget(c.record);
    },
    touch(r) {
      const now = Date.now();
      if (now - (touched.get(r.id) ?? 0) < signalEvery) return;
      touched.set(r.id, now);
      temporal.workflow
        .getHandle(sqlEngineWorkflowId(r.clusterId, r.type))
        .signal(engineUsedSignal)
        .catch((err) => log.warn('could not reset the engine idle clock', { engineId: r.id, err: String(err) }));
    },
    async close() {
      await Promise.all([pools.SPARK_SQL.close(), pools.TRINO.close(), history.flush()]);
    },
  };
}
