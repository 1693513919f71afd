// Spark Connect servers as the workflows and the gateway see them: ids, states, the read-model records and
// the workflow's input. Deterministic and free of zod: workflows import it (the API shapes are in
// api/connect/schemas.ts).
import type { DriverHost } from './hosts';
import type { EngineEndpoint } from './sql-engine';
import type { SparkSpec } from './types';

/**
 * Server states, as SQL engines': STARTING (being launched, or restarted after it died), RUNNING (taking
 * sessions), FAILED (could not be started; `error` says why; the next session or create tries again). A
 * stopped server (DELETE, idle with no session, cluster deleted) leaves the list.
 */
export const ConnectServerState = {
  STARTING: 'STARTING',
  RUNNING: 'RUNNING',
  FAILED: 'FAILED',
  STOPPED: 'STOPPED',
} as const;
export type ConnectServerState = (typeof ConnectServerState)[keyof typeof ConnectServerState];

/** One server per cluster (Kyuubi's server share level, as SQL engines): id `connect-<clusterId>`. */
export const connectServerId = (clusterId: string): string => `connect-${clusterId}`;
export const parseConnectServerId = (id: string): string | undefined =>
  id.startsWith('connect-') && id.length > 'connect-'.length ? id.slice('connect-'.length) : undefined;
export const connectServerWorkflowId = (clusterId: string): string => `connectserver/${clusterId}`;
/** Each generation its own driver, never found again once dead; `createdTime` as in sqlEngineDriverId. */
export const connectServerDriverId = (clusterId: string, generation: number, createdTime: number): string =>
  `${connectServerId(clusterId)}-${createdTime.toString(36)}-g${generation}`;

/** The server read model (collection connectServers), written only by the server workflow's projection. */
export interface ConnectServerRecord {
  id: string;
  clusterId: string;
  clusterName: string;
  state: ConnectServerState;
  /** Present while RUNNING: the server's gRPC (h2c) port, on loopback for local clusters. */
  endpoint?: EngineEndpoint;
  driverId?: string;
  /** The worker host that runs its driver, on local clusters (domain/hosts.ts). */
  host?: string;
  generation: number;
  /** Why the server failed to start, or why it was last restarted. */
  error?: string;
  startTime?: number;
  createdTime: number;
}

/** Input of the workflow `connectserver/<clusterId>`. */
export interface ConnectServerWorkflowInput {
  clusterId: string;
  clusterName: string;
  /** The cluster's defaultApplicationConfig and memory settings. */
  spark: SparkSpec;
  /** A server with no session for this long stops itself (CONNECT_IDLE_MS). */
  idleStopMs: number;
  /** How long a launch may take to listen before the server is FAILED (CONNECT_START_TIMEOUT_MS). */
  startTimeoutMs: number;
  createdTime: number;
  /** What a continued run carries over, as an SQL engine's (`host`: the worker host that owns the current driver). */
  resume?: { record: ConnectServerRecord; version: number; lastUsed: number; deaths: number[]; host?: DriverHost };
}

/**
 * A client's session as the gateway tracks it (collection connectSessions, owned by the API's gateway):
 * ACTIVE while its client calls, ENDED (with the reason) when released idle, closed by its client, or when
 * its server died. Ended ones are kept for a while so a late call of the same session fails clearly.
 */
export const ConnectSessionState = { ACTIVE: 'ACTIVE', ENDED: 'ENDED' } as const;
export type ConnectSessionState = (typeof ConnectSessionState)[keyof typeof ConnectSessionState];

export interface ConnectSessionRecord {
  /** The client's session_id (a UUID pyspark makes). */
  id: string;
  clusterId: string;
  clusterName: string;
  serverId: string;
  /** The server generation (driver) it runs on: a session never moves to a restarted server. */
  driverId: string;
  /** Who opened it (`key:<id>`, `oidc:<sub>`, `anonymous`); only they may use it. */
  principal: string;
  state: ConnectSessionState;
  startTime: number;
  lastUsed: number;
  calls: number;
  endTime?: number;
  endReason?: string;
}
