// What the API needs of an SQL engine's protocol: open a connection (one session each), run a statement
// with a row bound, a deadline and a cancel signal, and get exact, typed values back. Implemented for
// HiveServer2's Thrift protocol (hive.ts: Spark Thrift Server, Kyuubi) and Trino's HTTP protocol (trino.ts).
import type { EngineEndpoint } from '../../domain/sql-engine';
import type { SqlColumn, SqlOperationInfo } from '../../domain/sql';

export interface RunOptions {
  /** At most this many rows are fetched from the engine; the rest of the result is never transferred. */
  maxRows: number;
  /** Past this the statement is cancelled in the engine and the outcome is TIMEDOUT. */
  timeoutMs: number;
  /** Aborted when the client went away: the statement is cancelled in the engine, outcome CANCELED. */
  signal?: AbortSignal;
}

export interface StatementOutcome {
  /** state FINISHED, ERROR (engine's message in exception), CANCELED or TIMEDOUT; times in epoch ms. */
  info: SqlOperationInfo;
  columns: SqlColumn[];
  /** Exact values (domain/sql.ts SqlStatementResult). */
  rows: unknown[][];
  /** The engine's operation log of this statement (HiveServer2), or the engine's progress lines (Trino). */
  logs: string[];
}

/** One session on an engine. Not shared: one statement at a time. */
export interface SqlConnection {
  /** A statement the engine refuses resolves with info.state ERROR; only a broken connection rejects. */
  run(statement: string, opts: RunOptions): Promise<StatementOutcome>;
  /** False once the transport failed: the pool drops it instead of reusing it. */
  readonly healthy: boolean;
  close(): Promise<void>;
}

export interface SqlProtocol {
  /** Opens a connection and a session; rejects when nothing listens at the endpoint. */
  connect(endpoint: EngineEndpoint, opts?: { user?: string; connectTimeoutMs?: number }): Promise<SqlConnection>;
}
