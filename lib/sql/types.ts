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
  /** Rows go here batch by batch as they are fetched, instead of into the outcome (whose rows stay empty). */
  sink?: RowSink;
}

/** Where a statement's rows go as they arrive from the engine. */
export interface RowSink {
  /**
   * Once, before the first batch: the result's columns and, when the engine ended the statement before its
   * rows are fetched (HiveServer2), how it ended (state FINISHED, times; Trino ends a query only after its
   * last page).
   */
  begin(columns: SqlColumn[], ended?: SqlOperationInfo): void;
  /** A batch of rows, in the result's order. A returned promise holds back further fetching until it settles. */
  rows(batch: unknown[][]): void | Promise<void>;
  /**
   * Optional: the batch as JSON text instead of values, from a protocol that can write it without making the
   * values (HiveServer2; Trino where nothing is converted). Called instead of rows(), with the same back-pressure.
   */
  jsonRows?(batch: JsonRows): void | Promise<void>;
}

/** A batch of rows already serialised: the bytes JSON.stringify gives of their exact values. */
export interface JsonRows {
  readonly count: number;
  /** `head`, then rows from..to (of 0..count) as JSON arrays joined by commas, then `tail`. */
  encode(from: number, to: number, head: string, tail: string): Buffer;
}

export interface StatementOutcome {
  /** state FINISHED, ERROR (engine's message in exception), CANCELED or TIMEDOUT; times in epoch ms. */
  info: SqlOperationInfo;
  columns: SqlColumn[];
  /** Exact values (domain/sql.ts SqlStatementResult); empty when they went to RunOptions.sink. */
  rows: unknown[][];
  /** With a sink: the rows given to it. */
  rowCount?: number;
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
