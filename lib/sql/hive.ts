// HiveServer2's Thrift protocol (Spark Thrift Server, Kyuubi): one TCP connection and one session per
// SqlConnection. Statements run asynchronously; the server holds a status call until the statement ends
// (long polling), results come in batches of raw typed columns, converted by hive-values.ts (hive-driver's own
// result handler rounds DECIMAL and BIGINT, so only its connection and generated Thrift code are used), or, for
// a sink that takes JSON, written as JSON text from the received bytes by hive-json.ts.
// Over 300 lines on purpose: one connection's session, operations and fetch-ahead share its state; the wire
// link (hive-link.ts) and value conversion (hive-values.ts) already live apart.
import { thrift } from 'hive-driver';
import type { EngineEndpoint } from '../../domain/sql-engine';
import type { SqlColumn, SqlOperationInfo, SqlStatementState } from '../../domain/sql';
import { openLink, type Link } from './hive-link';
import { HiveJsonRows, type RawRowSet } from './hive-json';
import { hiveColumns, hiveRows, type HiveColumnDesc, type HiveRowSet } from './hive-values';
import { runControl, stopMessage, stoppedOutcome, type RunControl } from './pool';
import type { RunOptions, SqlConnection, SqlProtocol, StatementOutcome } from './types';

const { TCLIService_types: T } = thrift;

/** Rows per FetchResults: Hive's default server-side cap (hive.server2.thrift.resultset.max.fetch.size). */
const BATCH = 10_000;
/** Fetches kept asked for while rows are taken. */
const FETCH_AHEAD = 2;
const MAX_LOG_LINES = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** How long a cancelled statement's held status call may take to return before the outcome is given anyway. */
const CANCEL_WAIT_MS = 3_000;
/**
 * The statement log at VERBOSE: at the server's default level (EXECUTION) Spark's Thrift Server writes
 * nothing to it. A session setting, so it holds whatever the server was started with.
 */
const SESSION_CONF = { 'set:hiveconf:hive.server2.logging.operation.level': 'VERBOSE' };
const FETCH_NEXT = 0;
const FETCH_FIRST = 4;
const LOG_FETCH = 1;

interface Status {
  statusCode: number;
  errorMessage?: string | null;
}
interface Handle {
  hasResultSet?: boolean | null;
}
interface StatusResp {
  status: Status;
  operationState?: number | null;
  errorMessage?: string | null;
  hasResultSet?: boolean | null;
}

/** TStatusCode SUCCESS or SUCCESS_WITH_INFO. */
const ok = (s: Status) => s.statusCode === 0 || s.statusCode === 1;

/** TOperationState → statement state; undefined while it runs. */
const ENDED: Record<number, SqlStatementState> = {
  2: 'FINISHED',
  3: 'CANCELED',
  4: 'ERROR',
  5: 'ERROR',
  6: 'ERROR',
  8: 'TIMEDOUT',
};

/** The engine's message without the Java stack and exception class names. */
export function engineMessage(raw: string | null | undefined): string {
  const text = raw ?? 'the engine reported an error without a message';
  const stack = text.search(/\n\s*at [\w$./]+\(/);
  return (stack >= 0 ? text.slice(0, stack) : text)
    .replace(/^org\.apache\.hive\.service\.cli\.HiveSQLException: (Error running query: )?/, '')
    .replace(/(?:^|(?<=\] ))(?:[a-z][\w$]*\.)+[\w$]*(?:Exception|Error): \n?/g, '')
    .replace(/^(\[[\w.]+\]) (?=\1)/, '')
    .trim();
}

// ---- sessions and statements -----------------------------------------------------------------------

export const hiveProtocol: SqlProtocol = {
  async connect(endpoint, opts = {}) {
    const user = opts.user ?? 'anonymous';
    const timeoutMs = opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    const link = await openLink(endpoint, user, timeoutMs);
    try {
      const res = await link.call<{ status: Status; sessionHandle: Handle }>(
        'OpenSession',
        new T.TOpenSessionReq({
          client_protocol: T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10,
          username: user,
          password: 'anonymous',
          configuration: SESSION_CONF,
        }),
      );
      if (!ok(res.status)) throw new Error(`HiveServer2 refused a session: ${engineMessage(res.status.errorMessage)}`);
      return new HiveConnection(link, res.sessionHandle, endpoint, user, timeoutMs);
    } catch (err) {
      link.close();
      throw err;
    }
  },
};

class HiveConnection implements SqlConnection {
  private closed = false;

  constructor(
    private readonly link: Link,
    private readonly session: Handle,
    private readonly endpoint: EngineEndpoint,
    private readonly user: string,
    private readonly connectTimeoutMs: number,
  ) {}

  get healthy(): boolean {
    return !this.closed && !this.link.broken;
  }

  async run(statement: string, opts: RunOptions): Promise<StatementOutcome> {
    const info: Omit<SqlOperationInfo, 'state'> = { creationTime: Date.now() };
    const control = runControl(opts);
    try {
      if (control.reason) return stoppedOutcome(control.reason, info, stopMessage(control.reason, opts));
      const req = new T.TExecuteStatementReq({
        sessionHandle: this.session,
        statement,
        runAsync: true,
        confOverlay: {},
      });
      const exec = await this.link.call<{ status: Status; operationHandle?: Handle }>('ExecuteStatement', req);
      info.startTime = Date.now();
      if (!ok(exec.status) || !exec.operationHandle)
        return ended(info, 'ERROR', engineMessage(exec.status.errorMessage));
      const op = exec.operationHandle;
      try {
        return await this.follow(op, info, opts, control);
      } finally {
        // Not awaited: the socket keeps the order, the next statement's calls come after it.
        this.link.call('CloseOperation', new T.TCloseOperationReq({ operationHandle: op })).catch(() => undefined);
      }
    } finally {
      control.dispose();
    }
  }

  /** Waits for the statement's end (or its deadline or cancel), then fetches its rows and log. */
  private async follow(
    op: Handle,
    info: Omit<SqlOperationInfo, 'state'>,
    opts: RunOptions,
    control: RunControl,
  ): Promise<StatementOutcome> {
    const polling = this.waitForEnd(op, control);
    const end = await Promise.race([polling, control.stopped]);
    if (typeof end === 'string' || !end) {
      const reason = typeof end === 'string' ? end : (control.reason ?? 'CANCELED');
      await this.cancel(op, polling);
      return stoppedOutcome(reason, info, stopMessage(reason, opts), await this.logs(op));
    }
    info.completionTime = Date.now();
    const state = ok(end.status) ? ENDED[end.operationState ?? 6] : 'ERROR';
    if (state !== 'FINISHED') {
      const why = engineMessage(end.errorMessage ?? end.status.errorMessage ?? `the statement ended ${state}`);
      return { ...ended(info, state, why), logs: await this.logs(op) };
    }
    // Schema, first batch and log requested together: the server answers them in order, one wait for all.
    const logs = this.logs(op);
    logs.catch(() => undefined); // awaited below, after the rows
    if ((end.hasResultSet ?? op.hasResultSet) === false) return { ...ended(info, 'FINISHED'), logs: await logs };
    const finished: SqlOperationInfo = { ...info, state: 'FINISHED' };
    const result = this.fetchAll(op, opts, control, finished);
    const done = await Promise.race([result, control.stopped]);
    if (typeof done === 'string') {
      result.catch(() => undefined);
      return stoppedOutcome(done, info, stopMessage(done, opts), await logs);
    }
    if ('error' in done) return { ...ended(info, 'ERROR', done.error), logs: await logs };
    const outcome = { info: finished, columns: done.columns, rows: done.rows, logs: await logs };
    return opts.sink ? { ...outcome, rowCount: done.count } : outcome;
  }

  /** Status until the statement ends; undefined once stopped. Spark holds each call up to 5 s while it runs. */
  private async waitForEnd(op: Handle, control: RunControl): Promise<StatusResp | undefined> {
    for (let round = 0; ; round++) {
      const asked = Date.now();
      const s = await this.link.call<StatusResp>(
        'GetOperationStatus',
        new T.TGetOperationStatusReq({ operationHandle: op }),
      );
      if (!ok(s.status) || ENDED[s.operationState ?? 0]) return s;
      if (control.reason) return undefined;
      // A server without long polling answers at once: back off a little instead of spinning.
      if (Date.now() - asked < 20) await new Promise((r) => setTimeout(r, Math.min(2 ** round, 50)));
    }
  }

  /**
   * Cancels in the engine through a second connection (this one's status call may be held by the server),
   * then lets the held call return, so the connection is clean for the next statement.
   */
  private async cancel(op: Handle, polling: Promise<unknown>): Promise<void> {
    const req = new T.TCancelOperationReq({ operationHandle: op });
    try {
      const side = await openLink(this.endpoint, this.user, this.connectTimeoutMs);
      try {
        await side.call('CancelOperation', req);
      } finally {
        side.close();
      }
    } catch {
      await this.link.call('CancelOperation', req).catch(() => undefined);
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([polling.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, CANCEL_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /**
   * The rows, batch by batch: into the outcome, or to opts.sink as each batch arrives. FETCH_AHEAD fetches are
   * kept asked for, so the server has the next one to answer while a batch is converted or the sink holds
   * further fetching back (a slow client stops it there).
   */
  private async fetchAll(
    op: Handle,
    opts: RunOptions,
    control: RunControl,
    finished: SqlOperationInfo,
  ): Promise<{ columns: SqlColumn[]; rows: unknown[][]; count: number } | { error: string }> {
    const { maxRows, sink } = opts;
    const meta = this.link.call<{ status: Status; schema?: { columns: HiveColumnDesc[] } }>(
      'GetResultSetMetadata',
      new T.TGetResultSetMetadataReq({ operationHandle: op }),
    );
    // A sink that takes JSON gets it written straight from the received bytes (hive-json.ts).
    const asJson = !!sink?.jsonRows;
    const fetch = (n: number) =>
      this.link.call<{ status: Status; results?: HiveRowSet | RawRowSet }>(
        'FetchResults',
        new T.TFetchResultsReq({ operationHandle: op, orientation: FETCH_NEXT, maxRows: n, fetchType: 0 }),
        asJson,
      );
    const asked: { size: number; reply: ReturnType<typeof fetch> }[] = [];
    let requested = 0;
    let exhausted = false;
    const askAhead = () => {
      while (asked.length < FETCH_AHEAD && requested < maxRows && !exhausted && !control.reason) {
        const n = Math.min(BATCH, maxRows - requested);
        requested += n;
        const reply = fetch(n);
        reply.catch(() => undefined); // awaited below, or left when the statement stops
        asked.push({ size: n, reply });
      }
    };
    askAhead(); // with the schema call: the server answers them in order, one wait for all
    const schema = await meta;
    if (!ok(schema.status)) return { error: engineMessage(schema.status.errorMessage) };
    const columns = hiveColumns(schema.schema?.columns ?? []);
    sink?.begin(columns, finished);
    const rows: unknown[][] = [];
    let count = 0;
    while (asked.length) {
      const { size, reply } = asked.shift() as (typeof asked)[number];
      const res: Awaited<typeof reply> = await reply;
      if (!ok(res.status)) return { error: engineMessage(res.status.errorMessage) };
      const n = !res.results ? 0 : asJson ? (res.results as RawRowSet).count : rowCount(res.results as HiveRowSet);
      if (!n) exhausted = true;
      // A short batch may be the server's own cap, not the end: what it left out is asked for again.
      requested -= size - n;
      // The next batches are asked for before this one is converted, so the server works meanwhile.
      askAhead();
      if (!n || count >= maxRows) continue;
      if (asJson) {
        const json = new HiveJsonRows(columns, res.results as RawRowSet, Math.min(n, maxRows - count));
        count += json.count;
        if (!control.reason) await sink!.jsonRows!(json);
        continue;
      }
      let batch = hiveRows(columns, res.results as HiveRowSet);
      if (count + batch.length > maxRows) batch = batch.slice(0, maxRows - count);
      count += batch.length;
      if (!sink) for (const row of batch) rows.push(row);
      else if (!control.reason) await sink.rows(batch);
    }
    return { columns, rows, count };
  }

  /** The statement's operation log (empty when the server keeps none). */
  private async logs(op: Handle): Promise<string[]> {
    const req = new T.TFetchResultsReq({
      operationHandle: op,
      orientation: FETCH_FIRST,
      maxRows: MAX_LOG_LINES,
      fetchType: LOG_FETCH,
    });
    const res = await this.link.call<{ status: Status; results?: HiveRowSet }>('FetchResults', req);
    const lines = ok(res.status) ? res.results?.columns?.[0]?.stringVal?.values : undefined;
    return (lines as string[] | undefined) ?? [];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.link.broken) {
      let timer: NodeJS.Timeout | undefined;
      const closing = this.link
        .call('CloseSession', new T.TCloseSessionReq({ sessionHandle: this.session }))
        .catch(() => undefined);
      await Promise.race([closing, new Promise((r) => (timer = setTimeout(r, 2_000)))]);
      clearTimeout(timer);
    }
    this.link.close();
  }
}

function rowCount(set: HiveRowSet): number {
  const col = set.columns?.[0];
  if (!col) return 0;
  const v =
    col.stringVal ??
    col.i64Val ??
    col.i32Val ??
    col.doubleVal ??
    col.boolVal ??
    col.binaryVal ??
    col.i16Val ??
    col.byteVal;
  return v?.values.length ?? 0;
}

const ended = (
  info: Omit<SqlOperationInfo, 'state'>,
  state: SqlStatementState,
  exception?: string,
): StatementOutcome => ({
  info: { ...info, state, completionTime: info.completionTime ?? Date.now(), ...(exception ? { exception } : {}) },
  columns: [],
  rows: [],
  logs: [],
});
