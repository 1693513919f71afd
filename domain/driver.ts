// The driver contract that workflows and cluster adapters speak: what to launch (DriverSpec), what a
// driver is doing (DriverStatus), which log lines to read (LogRange), and the adapter interface with one
// implementation per cluster `type` (activities/adapters/local, activities/adapters/k8s).
// Adapters run only inside activities. Every method is idempotent, so a retried activity never starts
// a second driver: the driverId names the process or pod deterministically.
// Deterministic (no I/O): workflows import it.
import type { DriverHost } from './hosts';
import type { EngineEndpoint } from './sql-engine';
import type { SqlEngine } from './states';
import type { JobLogEntry, SparkSpec } from './types';

export interface DriverSpec {
  /**
   * Deterministic, unique name of this driver: `job-<jobId>-<attempt>` for a single job's try,
   * `inst-<instanceJobId>` for an interactive group instance. Launching the same driverId twice
   * finds the first driver instead of starting another.
   */
  driverId: string;
  /**
   * application: the user's Spark application; runner: runner/runner.py serving a group's task queue;
   * sql-engine: an SQL engine (`engine` says which) that listens for statements; connect-server: a Spark
   * Connect server (sessions reach it through the gateway, api/connect/).
   */
  role: 'application' | 'runner' | 'sql-engine' | 'connect-server';
  spark: SparkSpec;
  /** role sql-engine only. */
  engine?: SqlEngineSpec;
  /** Extra environment of the driver process (the runner's Temporal address, task queue, ...). */
  env: Record<string, string>;
  /** Ids to label the driver with (jobId, groupId, scheduleId), for operators and selectors. */
  labels: Record<string, string>;
}

/**
 * An SQL engine to launch. SPARK_SQL: Spark's Thrift Server (HiveServer2 protocol) with the cluster's Spark
 * settings; TRINO: a Trino coordinator with the tpch and memory catalogs. `stateKey` names what outlives
 * the engine's generations (warehouse and metastore of SPARK_SQL): the same key finds the same tables.
 */
export interface SqlEngineSpec {
  type: SqlEngine;
  stateKey: string;
}

export const DriverPhase = {
  /** Accepted, not yet running (process starting, pod pending). */
  PENDING: 'PENDING',
  RUNNING: 'RUNNING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  /** The cluster cannot be asked right now (API server unreachable); try again later. */
  UNKNOWN: 'UNKNOWN',
  /** No such driver: never launched, or removed. */
  MISSING: 'MISSING',
} as const;
export type DriverPhase = (typeof DriverPhase)[keyof typeof DriverPhase];

export interface DriverStatus {
  phase: DriverPhase;
  /** Spark application id once known (local-…, spark-…). */
  appId?: string;
  /** Why it failed or is unknown, in words for the job's `error`. */
  message?: string;
  exitCode?: number;
  /** Where an SQL engine listens (role sql-engine), once the adapter knows; listening may come later. */
  endpoint?: EngineEndpoint;
  /** Epoch ms when the driver started running / ended, when known. */
  startTime?: number;
  endTime?: number;
  /** The worker host that owns the driver (set by the launch, for clusters whose adapter is `hostBound`). */
  host?: DriverHost;
}

export interface LogRange {
  /** Offset (line number, from 0) from the start of each log. */
  from: number;
  /** Maximum number of lines per log. */
  size: number;
}

export interface ClusterAdapter {
  /**
   * Its drivers are processes and files of the host that launched them (local clusters): every later call on
   * a driver must run on a worker of that host (domain/hosts.ts).
   */
  readonly hostBound?: boolean;
  /** Starts the driver unless one with spec.driverId exists; returns its status either way. */
  launch(spec: DriverSpec): Promise<DriverStatus>;
  status(driverId: string): Promise<DriverStatus>;
  /** One entry per resource: the driver, and executors where the cluster has them. */
  logs(driverId: string, range: LogRange): Promise<JobLogEntry[]>;
  /** Stops and deletes the driver (and whatever it created); a missing driver is not an error. */
  remove(driverId: string): Promise<void>;
}

/** Phases after which the driver will not change again. */
export const isFinalPhase = (p: DriverPhase): boolean => p === 'SUCCEEDED' || p === 'FAILED';

/** ApplicationFailure types of the driver activities that the workflows treat as permanent (nonRetryableErrorTypes). */
export const FailureType = {
  CLUSTER_NOT_FOUND: 'ClusterNotFound',
  INVALID_SPEC: 'InvalidSpec',
  /** A launch that did not succeed within LAUNCH_DEADLINE_MS (domain/broken-clusters/unreachable.ts). */
  LAUNCH_DEADLINE: 'LaunchDeadline',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/**
 * A driver spec that cannot run (no main resource, a requirement pip cannot install): retrying will not
 * help, so the activities turn it into a non-retryable failure and the job fails with this message.
 */
export class InvalidSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSpecError';
  }
}
