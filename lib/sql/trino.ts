// Trino's HTTP protocol: POST /v1/statement, then follow nextUri until there is none, collecting columns and
// data; DELETE on the nextUri cancels. A SqlConnection is a client session: catalog, schema, session
// properties, prepared statements and transaction carried from one statement to the next the way Trino's own
// clients do, over a keep-alive HTTP agent of its own. Bodies are parsed with big integers kept exact.
// Over 300 lines on purpose: a statement's page loop, its session state and its cancel share one connection.
import http, { type IncomingHttpHeaders } from 'node:http';
import type { EngineEndpoint } from '../../domain/sql-engine';
import type { SqlColumn, SqlOperationInfo } from '../../domain/sql';
import { runControl, stopMessage, stoppedOutcome, type StopReason } from './pool';
import type { RowSink, RunOptions, SqlConnection, SqlProtocol, StatementOutcome } from './types';
import { rowsPassThrough, splitPage, type TrinoRowsText } from './trino-json';
import { parseExactJson, trinoColumns, trinoRowConverter, type TrinoColumn } from './trino-values';

const CONNECT_TIMEOUT_MS = 10_000;
const SOURCE = 'spark-orchestrator';
/** Trino answers 502, 503 and 504 while busy or restarting: its clients retry those. */
const RETRY_STATUS = new Set([502, 503, 504]);
const RETRIES = 5;
const MAX_LOG_LINES = 1_000;

interface TrinoPage {
  id: string;
  nextUri?: string;
  columns?: TrinoColumn[];
  data?: unknown[][];
  /** `data` left as text, for a sink that takes JSON (trino-json.ts). */
  rowsText?: TrinoRowsText;
  stats?: {
    state: string;
    completedSplits?: number;
    totalSplits?: number;
    processedRows?: number;
    processedBytes?: number;
  };
  error?: { message?: string; errorName?: string };
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

class TransportError extends Error {}

function send(
  agent: http.Agent,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
  signal?: AbortSignal,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export const trinoProtocol: SqlProtocol = {
  async connect(endpoint, opts = {}) {
    const conn = new TrinoConnection(endpoint, opts.user ?? 'anonymous');
    try {
      await conn.ping(opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS);
      return conn;
    } catch (e) {
      await conn.close();
      throw e;
    }
  },
};

class TrinoConnection implements SqlConnection {
  private readonly agent = new http.Agent({ keepAlive: true });
  private readonly base: string;
  private broken = false;
  private closed = false;
  // The client session, as Trino's responses change it.
  private catalog?: string;
  private schema?: string;
  private path?: string;
  private transactionId?: string;
  private readonly properties = new Map<string, string>();
  private readonly prepared = new Map<string, string>();

  constructor(
    endpoint: EngineEndpoint,
    private readonly user: string,
  ) {
    this.base = `http://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`;
  }

  get healthy(): boolean {
    return !this.broken && !this.closed;
  }

  /** Rejects unless a Trino coordinator that has finished starting answers. */
  async ping(timeoutMs: number): Promise<void> {
    const reply = await this.request('GET', `${this.base}/v1/info`, AbortSignal.timeout(timeoutMs));
    const info = reply.status === 200 ? (JSON.parse(reply.text) as { starting?: boolean }) : undefined;
    if (!info) throw new TransportError(`Trino at ${this.base} answered HTTP ${reply.status}`);
    if (info.starting) throw new TransportError(`Trino at ${this.base} is still starting`);
  }

  async run(statement: string, opts: RunOptions): Promise<StatementOutcome> {
    const info: Omit<SqlOperationInfo, 'state'> = { creationTime: Date.now() };
    const control = runControl(opts);
    const abort = new AbortController();
    void control.stopped.then(() => abort.abort());
    const stopped = (reason: StopReason, logs: string[]) =>
      stoppedOutcome(reason, info, stopMessage(reason, opts), logs);
    const query = new Query(opts.maxRows, opts.sink);
    try {
      if (control.reason) return stopped(control.reason, []);
      const asText = !!opts.sink?.jsonRows;
      let page = await this.call('POST', `${this.base}/v1/statement`, abort.signal, statement, asText);
      info.startTime = Date.now();
      for (;;) {
        const taking = query.take(page);
        if (page.error || !page.nextUri || query.full) await taking;
        if (page.error)
          return query.outcome(info, 'ERROR', page.error.message ?? page.error.errorName ?? 'query failed');
        if (!page.nextUri) return query.outcome(info, 'FINISHED');
        if (query.full) {
          await this.cancel(page.nextUri); // the rest is never transferred
          return query.outcome(info, 'FINISHED');
        }
        query.next = page.nextUri;
        if (control.reason) break;
        // The next page is asked for while the sink takes this one.
        const next = this.call('GET', page.nextUri, abort.signal, undefined, asText);
        if (taking) {
          next.catch(() => undefined); // awaited below, or dropped (aborted) when stopped
          await Promise.race([taking, control.stopped]);
          if (control.reason) break;
        }
        page = await next;
      }
    } catch (e) {
      if (!control.reason) throw e;
    } finally {
      control.dispose();
    }
    // Stopped by the deadline or the client: cancel in the engine, where the query would otherwise go on.
    if (query.next) await this.cancel(query.next);
    return stopped(control.reason ?? 'CANCELED', query.logs);
  }

  /** One protocol request: the page, with the session changes its headers carry applied; `asText`: rows as text. */
  private async call(
    method: string,
    url: string,
    signal: AbortSignal,
    body?: string,
    asText = false,
  ): Promise<TrinoPage> {
    const reply = await this.request(method, url, signal, body);
    if (reply.status !== 200) {
      this.broken = true;
      throw new TransportError(
        `Trino answered HTTP ${reply.status} to ${method} ${new URL(url).pathname}: ${reply.text.slice(0, 300)}`,
      );
    }
    this.applySession(reply.headers);
    const split = asText ? splitPage(reply.text) : undefined;
    if (!split) return parseExactJson(reply.text) as TrinoPage;
    return { ...(parseExactJson(split.rest) as TrinoPage), rowsText: split.rows };
  }

  private async request(method: string, url: string, signal: AbortSignal, body?: string): Promise<Reply> {
    const headers = method === 'POST' ? this.sessionHeaders() : { 'X-Trino-User': this.user };
    for (let attempt = 0; ; attempt++) {
      let reply: Reply;
      try {
        reply = await send(this.agent, method, url, headers, body, signal);
      } catch (e) {
        if (signal.aborted) throw e;
        // A nextUri may be fetched again (its token names the page), e.g. after a kept-alive socket was reset.
        if (method === 'GET' && attempt < 2) continue;
        this.broken = true;
        throw new TransportError(`Trino at ${this.base} failed: ${(e as Error).message}`);
      }
      if (!RETRY_STATUS.has(reply.status) || attempt >= RETRIES) return reply;
      await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
    }
  }

  /** DELETE on the query's next URI: Trino cancels the query. */
  private async cancel(nextUri: string): Promise<void> {
    await send(
      this.agent,
      'DELETE',
      nextUri,
      { 'X-Trino-User': this.user },
      undefined,
      AbortSignal.timeout(5_000),
    ).catch(() => undefined);
  }

  private sessionHeaders(): Record<string, string> {
    const h: Record<string, string> = {
      'X-Trino-User': this.user,
      'X-Trino-Source': SOURCE,
      'X-Trino-Client-Capabilities': 'PARAMETRIC_DATETIME',
    };
    if (this.catalog) h['X-Trino-Catalog'] = this.catalog;
    if (this.schema) h['X-Trino-Schema'] = this.schema;
    if (this.path) h['X-Trino-Path'] = this.path;
    if (this.transactionId) h['X-Trino-Transaction-Id'] = this.transactionId;
    const pairs = (m: Map<string, string>) =>
      [...m].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join(',');
    if (this.properties.size) h['X-Trino-Session'] = pairs(this.properties);
    if (this.prepared.size) h['X-Trino-Prepared-Statement'] = pairs(this.prepared);
    return h;
  }

  private applySession(h: IncomingHttpHeaders): void {
    const one = (k: string) => (typeof h[k] === 'string' ? (h[k] as string) : undefined);
    // Node joins repeated headers with ', '; the values themselves are URL-encoded, so ',' splits them.
    const list = (k: string) =>
      (one(k) ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    const pair = (s: string) =>
      [decodeURIComponent(s.slice(0, s.indexOf('='))), decodeURIComponent(s.slice(s.indexOf('=') + 1))] as const;
    this.catalog = one('x-trino-set-catalog') ?? this.catalog;
    this.schema = one('x-trino-set-schema') ?? this.schema;
    this.path = one('x-trino-set-path') ?? this.path;
    for (const s of list('x-trino-set-session')) this.properties.set(...pair(s));
    for (const k of list('x-trino-clear-session')) this.properties.delete(k);
    for (const s of list('x-trino-added-prepare')) this.prepared.set(...pair(s));
    for (const k of list('x-trino-deallocated-prepare')) this.prepared.delete(decodeURIComponent(k));
    this.transactionId = one('x-trino-started-transaction-id') ?? this.transactionId;
    if (h['x-trino-clear-transaction-id'] !== undefined) this.transactionId = undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.agent.destroy();
  }
}

/** What one statement has gathered from its pages: columns, rows up to maxRows (or given to the sink), progress lines. */
class Query {
  columns: SqlColumn[] = [];
  rows: unknown[][] = [];
  logs: string[] = [];
  /** Rows taken so far (kept, or given to the sink). */
  count = 0;
  /** The URI that cancels the query while it runs. */
  next?: string;
  private convert?: (rows: unknown[][]) => unknown[][];
  /** The sink takes JSON, and the rows go out as Trino sent them (trino-json.ts). */
  private passThrough = false;
  private progress = '';

  constructor(
    private readonly maxRows: number,
    private readonly sink?: RowSink,
  ) {}

  get full(): boolean {
    return this.count >= this.maxRows;
  }

  /** Takes a page; a promise when the sink holds back the next page until it settles. */
  take(page: TrinoPage): void | Promise<void> {
    if (page.columns && !this.convert) {
      this.columns = trinoColumns(page.columns);
      this.convert = trinoRowConverter(page.columns);
      this.passThrough = !!this.sink?.jsonRows && rowsPassThrough(page.columns);
      this.sink?.begin(this.columns);
    }
    let taking: void | Promise<void> = undefined;
    const text = page.rowsText;
    if (text && !this.passThrough) page.data = parseExactJson(text.json) as unknown[][];
    if (text?.count && this.passThrough && !this.full) {
      const rows = text.limit(this.maxRows - this.count);
      this.count += rows.count;
      taking = this.sink!.jsonRows!(rows);
    } else if (page.data?.length && this.convert && !this.full) {
      const room = this.maxRows - this.count;
      const rows = this.convert(page.data.length > room ? page.data.slice(0, room) : page.data);
      this.count += rows.length;
      if (this.sink) taking = this.sink.rows(rows);
      else for (const row of rows) this.rows.push(row);
    }
    const s = page.stats;
    if (!s || this.logs.length >= MAX_LOG_LINES) return taking;
    const line = `${page.id} ${s.state}: ${s.completedSplits ?? 0}/${s.totalSplits ?? 0} splits, ${s.processedRows ?? 0} rows, ${s.processedBytes ?? 0} bytes`;
    if (line !== this.progress) this.logs.push((this.progress = line));
    return taking;
  }

  outcome(info: Omit<SqlOperationInfo, 'state'>, state: 'FINISHED' | 'ERROR', exception?: string): StatementOutcome {
    const done = { ...info, state, completionTime: Date.now(), ...(exception !== undefined ? { exception } : {}) };
    const outcome = { info: done, columns: this.columns, rows: state === 'ERROR' ? [] : this.rows, logs: this.logs };
    return this.sink ? { ...outcome, rowCount: this.count } : outcome;
  }
}
