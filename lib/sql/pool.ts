// Sessions per engine endpoint: a statement takes an idle healthy connection, or opens one while fewer
// than maxSessions are open, or waits its turn. Broken connections are dropped, idle ones closed after
// idleMs, and invalidate() retires every connection of an engine that restarted. The deadline and cancel
// handling every statement shares (queue, protocols) is here too.
import type { EngineEndpoint } from '../../domain/sql-engine';
import type { SqlOperationInfo } from '../../domain/sql';
import type { RunOptions, SqlConnection, SqlProtocol, StatementOutcome } from './types';

// ---- deadline and cancel -------------------------------------------------------------------------

export type StopReason = 'TIMEDOUT' | 'CANCELED';

/** A statement's deadline and cancel signal as one promise that settles with the reason to stop. */
export interface RunControl {
  readonly reason: StopReason | undefined;
  readonly stopped: Promise<StopReason>;
  dispose(): void;
}

/** setTimeout fires at once for delays above 2^31 - 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function runControl(opts: Pick<RunOptions, 'timeoutMs' | 'signal'>): RunControl {
  let reason: StopReason | undefined;
  let fire: (r: StopReason) => void = () => undefined;
  const stopped = new Promise<StopReason>((resolve) => (fire = resolve));
  const stop = (r: StopReason) => {
    if (reason) return;
    reason = r;
    fire(r);
  };
  const onAbort = () => stop('CANCELED');
  const timer = setTimeout(() => stop('TIMEDOUT'), Math.min(Math.max(0, opts.timeoutMs), MAX_TIMER_MS));
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    get reason() {
      return reason;
    },
    stopped,
    dispose() {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    },
  };
}

const CANCEL_MESSAGE = 'statement cancelled: the client went away';

/** Why a statement the engine had started was stopped. */
export const stopMessage = (reason: StopReason, opts: Pick<RunOptions, 'timeoutMs'>): string =>
  reason === 'TIMEDOUT'
    ? `statement timed out after ${opts.timeoutMs} ms and was cancelled in the engine`
    : CANCEL_MESSAGE;

/** The outcome of a statement stopped by its deadline or its client. */
export function stoppedOutcome(
  reason: StopReason,
  info: Omit<SqlOperationInfo, 'state'>,
  exception: string,
  logs: string[] = [],
): StatementOutcome {
  return { info: { ...info, state: reason, completionTime: Date.now(), exception }, columns: [], rows: [], logs };
}

// ---- the pool -------------------------------------------------------------------------------------

export interface SqlPoolOptions {
  /** Connections per endpoint; callers beyond wait in order. */
  maxSessions: number;
  /** An idle connection is closed after this long. */
  idleMs: number;
  user?: string;
  connectTimeoutMs?: number;
}

export interface SqlPool {
  /** Runs on a pooled connection; rejects when no connection could be made or it broke (SqlConnection.run). */
  run(endpoint: EngineEndpoint, statement: string, opts: RunOptions): Promise<StatementOutcome>;
  /** The engine at this endpoint restarted or stopped: close its idle connections now, busy ones when done. */
  invalidate(endpoint: EngineEndpoint): void;
  close(): Promise<void>;
}

interface Waiter {
  /** A connection handed over, or undefined: a slot is free, open one. */
  take(conn: SqlConnection | undefined): void;
  fail(e: Error): void;
}

interface Endpoint {
  key: string;
  idle: { conn: SqlConnection; timer: NodeJS.Timeout }[];
  /** Connections open or opening, idle ones included. */
  open: number;
  waiters: Waiter[];
  /** Bumped by invalidate(): connections of an older generation are closed when returned. */
  generation: number;
}

export const createSqlPool = (protocol: SqlProtocol, opts: SqlPoolOptions): SqlPool => new Pool(protocol, opts);

const CLOSED = 'the SQL session pool is closed';

class Pool implements SqlPool {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly closing = new Set<Promise<void>>();
  /** The endpoint's generation each connection was opened in. */
  private readonly generationOf = new WeakMap<SqlConnection, number>();
  private closed = false;

  constructor(
    private readonly protocol: SqlProtocol,
    private readonly opts: SqlPoolOptions,
  ) {}

  async run(e: EngineEndpoint, statement: string, runOpts: RunOptions): Promise<StatementOutcome> {
    if (this.closed) throw new Error(CLOSED);
    const creationTime = Date.now();
    const p = this.endpoint(e);
    const control = runControl(runOpts);
    let got: SqlConnection | StopReason;
    try {
      got = await this.acquire(e, p, control);
    } finally {
      control.dispose();
    }
    if (typeof got === 'string') {
      const waited = `statement timed out after ${runOpts.timeoutMs} ms waiting for a session`;
      return stoppedOutcome(got, { creationTime }, got === 'TIMEDOUT' ? waited : CANCEL_MESSAGE);
    }
    const conn = got;
    let failed = true;
    try {
      // The time spent waiting for a session counts against the statement's deadline.
      const timeoutMs = Math.max(1, runOpts.timeoutMs - (Date.now() - creationTime));
      const outcome = await conn.run(statement, { ...runOpts, timeoutMs });
      failed = false;
      const info = { ...outcome.info, creationTime };
      // The caller asked for timeoutMs; the engine was given what was left of it.
      if (info.state === 'TIMEDOUT') info.exception = stopMessage('TIMEDOUT', runOpts);
      return { ...outcome, info };
    } finally {
      this.release(p, conn, failed);
    }
  }

  invalidate(e: EngineEndpoint): void {
    const p = this.endpoints.get(key(e));
    if (!p) return;
    p.generation++;
    this.dropIdle(p);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.endpoints.values()) {
      // Waiters first: dropping a connection would hand its slot to one.
      for (const w of p.waiters.splice(0)) w.fail(new Error(CLOSED));
      this.dropIdle(p);
    }
    await Promise.all([...this.closing]);
  }

  private endpoint(e: EngineEndpoint): Endpoint {
    let p = this.endpoints.get(key(e));
    if (!p) this.endpoints.set(key(e), (p = { key: key(e), idle: [], open: 0, waiters: [], generation: 0 }));
    return p;
  }

  /** A connection for a statement, or the reason it stopped while waiting for one. */
  private async acquire(e: EngineEndpoint, p: Endpoint, control: RunControl): Promise<SqlConnection | StopReason> {
    for (;;) {
      if (this.closed) throw new Error(CLOSED);
      const idle = p.idle.pop(); // most recently used first: its socket is the warmest
      if (idle) {
        clearTimeout(idle.timer);
        if (idle.conn.healthy) return idle.conn;
        this.drop(p, idle.conn);
        continue;
      }
      if (p.open < this.opts.maxSessions) return this.connect(e, p, control);
      let waiter: Waiter | undefined;
      const turn = new Promise<SqlConnection | undefined>((take, fail) => p.waiters.push((waiter = { take, fail })));
      const got = await Promise.race([turn, control.stopped]);
      if (typeof got !== 'string') {
        if (got) return got;
        continue; // a slot came free: open a connection in it
      }
      const i = p.waiters.indexOf(waiter as Waiter);
      if (i >= 0) p.waiters.splice(i, 1);
      // Handed a connection or a slot in the same tick the deadline passed: pass it on.
      else
        void turn.then(
          (c) => (c ? this.release(p, c) : this.wake(p)),
          () => undefined,
        );
      return got;
    }
  }

  private async connect(e: EngineEndpoint, p: Endpoint, control: RunControl): Promise<SqlConnection | StopReason> {
    p.open++;
    const generation = p.generation;
    const { user, connectTimeoutMs } = this.opts;
    const opening = this.protocol.connect(e, { user, connectTimeoutMs }).then((c) => {
      this.generationOf.set(c, generation);
      return c;
    });
    try {
      const got = await Promise.race([opening, control.stopped]);
      // Stopped while connecting: the connection, once open, serves the next caller.
      if (typeof got === 'string')
        void opening.then(
          (c) => this.release(p, c),
          () => this.drop(p),
        );
      return got;
    } catch (err) {
      this.drop(p);
      throw err;
    }
  }

  private release(p: Endpoint, conn: SqlConnection, failed = false): void {
    const stale = this.generationOf.get(conn) !== p.generation;
    if (failed || this.closed || stale || !conn.healthy) return this.drop(p, conn);
    const w = p.waiters.shift();
    if (w) return w.take(conn);
    const entry = { conn, timer: setTimeout(() => this.expire(p, entry), this.opts.idleMs) };
    entry.timer.unref();
    p.idle.push(entry);
  }

  private expire(p: Endpoint, entry: Endpoint['idle'][number]): void {
    const i = p.idle.indexOf(entry);
    if (i < 0) return;
    p.idle.splice(i, 1);
    this.drop(p, entry.conn);
  }

  private dropIdle(p: Endpoint): void {
    for (const { conn, timer } of p.idle.splice(0)) {
      clearTimeout(timer);
      this.drop(p, conn);
    }
  }

  /** Gives up a slot, closing its connection if it has one. */
  private drop(p: Endpoint, conn?: SqlConnection): void {
    p.open--;
    if (conn) {
      const done = conn.close().catch(() => undefined);
      this.closing.add(done);
      void done.finally(() => this.closing.delete(done));
    }
    this.wake(p);
    if (p.open === 0 && !p.waiters.length && this.endpoints.get(p.key) === p) this.endpoints.delete(p.key);
  }

  /** A free slot goes to the first waiter, which opens a connection of its own. */
  private wake(p: Endpoint): void {
    if (p.waiters.length && p.open < this.opts.maxSessions) p.waiters.shift()?.take(undefined);
  }
}

const key = (e: EngineEndpoint) => `${e.host}:${e.port}`;
