// The SQL session pool (lib/sql/pool.ts) over a fake protocol: reuse, the maxSessions queue, broken
// connections dropped, invalidate() after an engine restart, idle connections closed, close().
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqlPool, runControl } from '../../lib/sql/pool';
import type { RunOptions, SqlConnection, SqlProtocol, StatementOutcome } from '../../lib/sql/types';

interface FakeConn extends SqlConnection {
  id: number;
  closed: boolean;
  statements: string[];
  breakNow(): void;
}

/** Statements `wait:<ms>` take that long; `break` fails the transport; anything else answers at once. */
function fakeProtocol(opts: { failConnect?: () => boolean } = {}) {
  const conns: FakeConn[] = [];
  let active = 0;
  let maxActive = 0;
  const protocol: SqlProtocol = {
    async connect() {
      await Promise.resolve();
      if (opts.failConnect?.()) throw new Error('connection refused');
      let healthy = true;
      const conn: FakeConn = {
        id: conns.length + 1,
        closed: false,
        statements: [],
        get healthy() {
          return healthy && !conn.closed;
        },
        breakNow: () => (healthy = false),
        async run(statement: string, run: RunOptions): Promise<StatementOutcome> {
          conn.statements.push(statement);
          maxActive = Math.max(maxActive, ++active);
          try {
            if (statement === 'break') {
              healthy = false;
              throw new Error('socket closed');
            }
            const ms = statement.startsWith('wait:') ? Number(statement.slice(5)) : 0;
            const control = runControl(run);
            const reason = ms
              ? await Promise.race([new Promise<undefined>((r) => setTimeout(() => r(undefined), ms)), control.stopped])
              : undefined;
            control.dispose();
            const info = { creationTime: 0, state: reason ?? ('FINISHED' as const) };
            return { info, columns: [], rows: [[conn.id]], logs: [] };
          } finally {
            active--;
          }
        },
        async close() {
          conn.closed = true;
        },
      };
      conns.push(conn);
      return conn;
    },
  };
  return { protocol, conns, maxActive: () => maxActive };
}

const ep = { host: 'engine', port: 1 };
const opts = (more: Partial<RunOptions> = {}): RunOptions => ({ maxRows: 10, timeoutMs: 5_000, ...more });

afterEach(() => {
  vi.useRealTimers();
});

describe('SQL session pool', () => {
  it('reuses an idle healthy connection', async () => {
    const f = fakeProtocol();
    const pool = createSqlPool(f.protocol, { maxSessions: 4, idleMs: 60_000 });
    for (let i = 0; i < 5; i++) expect((await pool.run(ep, 'select 1', opts())).rows).toEqual([[1]]);
    expect(f.conns).toHaveLength(1);
    expect(f.conns[0].statements).toHaveLength(5);
    await pool.close();
    expect(f.conns[0].closed).toBe(true);
  });

  it('opens up to maxSessions and queues the callers beyond, in order', async () => {
    const f = fakeProtocol();
    const pool = createSqlPool(f.protocol, { maxSessions: 3, idleMs: 60_000 });
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => pool.run(ep, 'wait:20', opts())));
    expect(outcomes.every((o) => o.info.state === 'FINISHED')).toBe(true);
    expect(f.conns).toHaveLength(3);
    expect(f.maxActive()).toBe(3);
    expect(f.conns.reduce((n, c) => n + c.statements.length, 0)).toBe(10);
    // Another endpoint has its own sessions.
    await pool.run({ host: 'other', port: 1 }, 'select 1', opts());
    expect(f.conns).toHaveLength(4);
    await pool.close();
  });

  it('times out and cancels callers waiting in the queue, without running their statement', async () => {
    const f = fakeProtocol();
    const pool = createSqlPool(f.protocol, { maxSessions: 1, idleMs: 60_000 });
    const busy = pool.run(ep, 'wait:200', opts());
    const late = await pool.run(ep, 'queued', opts({ timeoutMs: 30 }));
    expect(late.info.state).toBe('TIMEDOUT');
    expect(late.info.exception).toMatch(/waiting for a session/);
    const abort = new AbortController();
    const gone = pool.run(ep, 'queued', opts({ signal: abort.signal }));
    abort.abort();
    expect((await gone).info.state).toBe('CANCELED');
    expect((await busy).info.state).toBe('FINISHED');
    expect(f.conns[0].statements).toEqual(['wait:200']);
    // The slot is still usable.
    expect((await pool.run(ep, 'select 1', opts())).info.state).toBe('FINISHED');
    await pool.close();
  });

  it('drops a connection whose transport broke and opens a new one', async () => {
    const f = fakeProtocol();
    const pool = createSqlPool(f.protocol, { maxSessions: 1, idleMs: 60_000 });
    await expect(pool.run(ep, 'break', opts())).rejects.toThrow('socket closed');
    expect(f.conns[0].closed).toBe(true);
    await pool.run(ep, 'select 1', opts());
    // Broken while idle (the engine closed the socket): not handed out again.
    f.conns[1].breakNow();
    const o = await pool.run(ep, 'select 1', opts());
    expect(o.rows).toEqual([[3]]);
    expect(f.conns[1].closed).toBe(true);
    await pool.close();
  });

  it('lets a waiter connect when a connect fails, and rejects the caller whose connect failed', async () => {
    let fail = true;
    const f = fakeProtocol({ failConnect: () => fail });
    const pool = createSqlPool(f.protocol, { maxSessions: 1, idleMs: 60_000 });
    await expect(pool.run(ep, 'select 1', opts())).rejects.toThrow('connection refused');
    fail = false;
    expect((await pool.run(ep, 'select 1', opts())).info.state).toBe('FINISHED');
    await pool.close();
  });

  it('invalidate() closes idle connections now and busy ones when they finish', async () => {
    const f = fakeProtocol();
    const pool = createSqlPool(f.protocol, { maxSessions: 4, idleMs: 60_000 });
    await Promise.all([pool.run(ep, 'wait:10', opts()), pool.run(ep, 'wait:10', opts())]);
    const busy = pool.run(ep, 'wait:50', opts());
    await new Promise((r) => setTimeout(r, 5));
    pool.invalidate(ep);
    expect(f.conns.filter((c) => c.closed)).toHaveLength(1);
    await busy;
    expect(f.conns.every((c) => c.closed)).toBe(true);
    await pool.run(ep, 'select 1', opts());
    expect(f.conns).toHaveLength(3);
    expect(f.conns[2].closed).toBe(false);
    await pool.close();
  });

  it('closes connections idle for idleMs', async () => {
    vi.useFakeTimers();
    const f = fakeProtocol();
    const pool = createSqlPool(f.protocol, { maxSessions: 2, idleMs: 1_000 });
    await pool.run(ep, 'select 1', opts());
    await vi.advanceTimersByTimeAsync(900);
    await pool.run(ep, 'select 1', opts()); // used again: its idle clock starts over
    await vi.advanceTimersByTimeAsync(900);
    expect(f.conns[0].closed).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(f.conns[0].closed).toBe(true);
    await pool.run(ep, 'select 1', opts());
    expect(f.conns).toHaveLength(2);
    await pool.close();
  });

  it('rejects waiters and new statements once closed', async () => {
    const f = fakeProtocol();
    const pool = createSqlPool(f.protocol, { maxSessions: 1, idleMs: 60_000 });
    const busy = pool.run(ep, 'wait:30', opts());
    const waiting = pool.run(ep, 'select 1', opts());
    await new Promise((r) => setTimeout(r, 5));
    await pool.close();
    await expect(waiting).rejects.toThrow(/closed/);
    expect((await busy).info.state).toBe('FINISHED');
    expect(f.conns[0].closed).toBe(true);
    await expect(pool.run(ep, 'select 1', opts())).rejects.toThrow(/closed/);
  });
});
