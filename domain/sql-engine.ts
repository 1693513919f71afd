// SQL engines as the workflows see them: ids, states, the read-model record and the workflow's input.
// Deterministic and free of zod: workflows import it (the API shapes are in sql.ts).
import type { DriverHost } from './hosts';
import type { SparkSpec } from './types';
import type { SqlEngine } from './states';

export { SQL_ENGINES, SqlEngine } from './states';

/**
 * Engine states. STARTING: being launched, or restarted after it died; RUNNING: accepting statements;
 * FAILED: could not be started (the reason is in `error`); the workflow waits for a new create or
 * execute to try again. A stopped engine (DELETE, idle, cluster deleted) leaves the list.
 */
export const SqlEngineState = {
  STARTING: 'STARTING',
  RUNNING: 'RUNNING',
  FAILED: 'FAILED',
  STOPPED: 'STOPPED',
} as const;
export type SqlEngineState = (typeof SqlEngineState)[keyof typeof SqlEngineState];

/** Where a running engine listens: HiveServer2 Thrift (SPARK_SQL) or Trino's HTTP protocol (TRINO). */
export interface EngineEndpoint {
  host: string;
  port: number;
}

/** Engine ids are URL-safe: `sparksql-<clusterId>` or `trino-<clusterId>`. */
const ENGINE_PREFIX: Record<SqlEngine, string> = { SPARK_SQL: 'sparksql', TRINO: 'trino' };
export const sqlEngineId = (clusterId: string, type: SqlEngine): string => `${ENGINE_PREFIX[type]}-${clusterId}`;
export function parseSqlEngineId(id: string): { clusterId: string; type: SqlEngine } | undefined {
  const dash = id.indexOf('-');
  if (dash < 0) return undefined;
  const type = (Object.keys(ENGINE_PREFIX) as SqlEngine[]).find((t) => ENGINE_PREFIX[t] === id.slice(0, dash));
  const clusterId = id.slice(dash + 1);
  return type && clusterId ? { clusterId, type } : undefined;
}
/** One engine per cluster and type (Kyuubi's server share level): workflow `sqlengine/<clusterId>/<type>`. */
export const sqlEngineWorkflowId = (clusterId: string, type: SqlEngine): string => `sqlengine/${clusterId}/${type}`;
/**
 * Driver ids of an engine's generations: each restart launches a new one, so a dead one is never found again.
 * `createdTime` (the workflow input's) tells apart the engines a cluster has over time: generations count
 * from 1 again after a stop, and adapters keep a removed driver's id taken (the local one keeps its folder,
 * a deleted pod may still terminate), so a new engine's `-g1` must not be the stopped one's.
 */
export function sqlEngineDriverId(
  clusterId: string,
  type: SqlEngine,
  generation: number,
  createdTime?: number,
): string {
  const created = createdTime === undefined ? '' : `-${createdTime.toString(36)}`;
  return `${sqlEngineId(clusterId, type)}${created}-g${generation}`;
}

/** The engine read model (collection sqlEngines), written only by the engine workflow's projection. */
export interface SqlEngineRecord {
  id: string;
  clusterId: string;
  clusterName: string;
  type: SqlEngine;
  state: SqlEngineState;
  /** Present while RUNNING. */
  endpoint?: EngineEndpoint;
  driverId?: string;
  /** The worker host that runs its driver, on local clusters (domain/hosts.ts). */
  host?: string;
  generation: number;
  /** Why the engine failed to start, or why it was last restarted. */
  error?: string;
  startTime?: number;
  createdTime: number;
}

/** Input of the workflow `sqlengine/<clusterId>/<type>`. */
export interface SqlEngineWorkflowInput {
  clusterId: string;
  clusterName: string;
  type: SqlEngine;
  /** Spark settings of a SPARK_SQL engine: the cluster's defaultApplicationConfig and memory settings. */
  spark: SparkSpec;
  /** An engine with no statement for this long stops itself (SQL_ENGINE_IDLE_MS). */
  idleStopMs: number;
  /** How long a launch may take to start listening before the engine is FAILED (SQL_ENGINE_START_TIMEOUT_MS). */
  startTimeoutMs: number;
  createdTime: number;
  /** What a continued run carries over: the record, the last write version, the idle clock, recent deaths. */
  /** `host`: the worker host that owns the current driver (domain/hosts.ts), absent for host-free clusters. */
  resume?: { record: SqlEngineRecord; version: number; lastUsed: number; deaths: number[]; host?: DriverHost };
}
