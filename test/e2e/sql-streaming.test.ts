// POST /sql/execute streams large results (api/sql/execute/result-body.ts): rows go to the client as the
// engine's batches arrive, with back-pressure, against a real Spark Thrift Server and a real Trino. A result
// of many batches arrives whole and in order, as one JSON object or as JSON lines; a small one is answered in
// one piece as before; a client that goes away mid-result has its statement stopped in the engine and its
// session freed; a statement that fails after its rows started has its transfer cut; the API holds a few
// batches, not the result.
// One session per engine (SQL_SESSIONS_PER_ENGINE=1), so a session kept by a forgotten statement shows.
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SqlEngine } from '../../domain/states';
import { loadConfig } from '../../lib/config';
import { trinoTestHome } from '../../testkit/trino';
import { call, eventually, startHarness, type Harness } from '../harness';

let h: Harness;
const trino = () => existsSync(path.join(h.config.TRINO_HOME, 'bin', 'launcher'));
const sql = (statement: string, extra: Record<string, unknown> = {}) =>
  call(h, 'POST', '/sql/execute', { statement, ...extra });

/** POST /sql/execute with the raw answer: status, headers and text. */
async function raw(
  body: Record<string, unknown>,
  accept?: string,
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${h.url}/sql/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The history record of the one statement holding `marker`, once it has ended. */
const ended = (marker: string) =>
  eventually(
    async () => {
      const e = (await call(h, 'GET', `/sql/history?search=${marker}`)).body.content?.[0];
      return e && e.state !== 'RUNNING' ? (e as { state: string; rows?: number }) : undefined;
    },
    30_000,
    250,
  );

beforeAll(async () => {
  // Trino with the tests' JVM options (testkit/trino.ts says why).
  const TRINO_HOME = trinoTestHome(path.join(inject('testDir'), 'trino-home'), loadConfig().TRINO_HOME);
  h = await startHarness({
    env: { SQL_ENGINE_START_TIMEOUT_MS: '170000', SQL_SESSIONS_PER_ENGINE: '1', TRINO_HOME },
  });
  // Both engines start side by side (JVM start-up is slow). On a loaded machine a just-started Thrift Server
  // may take longer than the API's connect timeout to open its first session: asked again then.
  const ready = (engine: SqlEngine) =>
    eventually(
      async () => ((await sql('select 1', { engine })).body.info?.state === 'FINISHED' ? true : undefined),
      170_000,
      1_000,
    );
  await Promise.all([ready('SPARK_SQL'), ...(trino() ? [ready('TRINO')] : [])]);
});
afterAll(async () => {
  const engines = h ? ((await call(h, 'GET', '/sql/engine/default').catch(() => ({ body: [] }))).body ?? []) : [];
  for (const e of engines as { id: string }[]) await call(h, 'DELETE', `/sql/engine/${e.id}`);
  await h?.stop();
});

/** N rows (i, text of i) in order of i, from 0 (N a multiple of 1,000): many batches of the engine. */
const ordered: Record<SqlEngine, (n: number, marker: string) => string> = {
  SPARK_SQL: (n, marker) => `select id, cast(id as string) ${marker} from range(${n})`,
  TRINO: (n, marker) =>
    `select a.x * 1000 + b.y as id, cast(a.x * 1000 + b.y as varchar) ${marker} ` +
    `from unnest(sequence(0, ${n / 1000 - 1})) a(x) cross join unnest(sequence(0, 999)) b(y) order by 1`,
};
/** N rows of `width` characters each, made lazily by the engine; `marker` in the statement's text. */
const wide: Record<SqlEngine, (n: number, width: number, marker: string) => string> = {
  SPARK_SQL: (n, width, marker) => `select id, repeat('x', ${width}) s, '${marker}' m from range(${n})`,
  TRINO: (n, width, marker) =>
    `select a.x * 1000 + b.y, rpad('', ${width}, 'x'), '${marker}' from unnest(sequence(0, ${n / 1000 - 1})) a(x) ` +
    'cross join unnest(sequence(0, 999)) b(y)',
};

describe.each(['SPARK_SQL', 'TRINO'] as const)('streamed results on %s', (engine) => {
  const skipUnlessInstalled = (ctx: { skip(): void }) => {
    if (engine === 'TRINO' && !trino()) ctx.skip();
  };

  it('a result of many batches arrives complete and in order, streamed, as the JSON of the same object', async (ctx) => {
    skipUnlessInstalled(ctx);
    const n = 45_000;
    const marker = `in_order_${engine.toLowerCase()}`;
    const r = await raw({ statement: ordered[engine](n, marker), engine, maxRows: n });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // Streamed: chunked, no length known in advance.
    expect(r.headers.get('transfer-encoding')).toBe('chunked');
    expect(r.headers.get('content-length')).toBeNull();
    const body = JSON.parse(r.text) as { info: { state: string }; columns: { name: string }[]; rows: unknown[][] };
    expect(body.info.state).toBe('FINISHED');
    expect(body.columns.map((c) => c.name)).toEqual(['id', marker]);
    expect(body.rows.length).toBe(n);
    const wrong = body.rows.findIndex((row, i) => row[0] !== i || row[1] !== String(i));
    expect(wrong).toBe(-1);
    // Exactly JSON.stringify of the parsed object: the bytes a whole answer of these keys would have.
    expect(JSON.stringify(body)).toBe(r.text);
    // The Thrift Server ends a statement before its rows are fetched: info first, as in a whole answer.
    // Trino ends a query after its last page: info after the rows.
    expect(Object.keys(body)).toEqual(
      engine === 'SPARK_SQL' ? ['info', 'columns', 'rows', 'logs'] : ['columns', 'rows', 'info', 'logs'],
    );
    const rec = await ended(marker);
    expect(rec).toMatchObject({ state: 'FINISHED', rows: n });
  });

  it('as JSON lines when asked for: columns, lines of rows as they come, then info and logs', async (ctx) => {
    skipUnlessInstalled(ctx);
    const n = 45_000;
    const marker = `lines_${engine.toLowerCase()}`;
    const r = await raw({ statement: ordered[engine](n, marker), engine, maxRows: n }, 'application/x-ndjson');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/x-ndjson');
    expect(r.headers.get('transfer-encoding')).toBe('chunked');
    expect(r.text.endsWith('\n')).toBe(true);
    const lines = r.text
      .slice(0, -1)
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(lines[0])).toEqual(['columns']);
    expect((lines[0].columns as { name: string }[]).map((c) => c.name)).toEqual(['id', marker]);
    const last = lines.at(-1)!;
    expect(Object.keys(last)).toEqual(['info', 'logs']);
    expect(last.info).toMatchObject({ state: 'FINISHED' });
    const middle = lines.slice(1, -1);
    // More than one batch, each its own line.
    expect(middle.length).toBeGreaterThan(1);
    for (const l of middle) expect(Object.keys(l)).toEqual(['rows']);
    const rows = middle.flatMap((l) => l.rows as unknown[][]);
    expect(rows.length).toBe(n);
    expect(rows.findIndex((row, i) => row[0] !== i || row[1] !== String(i))).toBe(-1);
    expect(await ended(marker)).toMatchObject({ state: 'FINISHED', rows: n });

    // A small result: the same lines in one piece, with their length; a failing statement: no rows line.
    const small = await raw({ statement: 'select 1 as one', engine }, 'application/x-ndjson; charset=utf-8');
    expect(small.headers.get('content-type')).toBe('application/x-ndjson');
    expect(Number(small.headers.get('content-length'))).toBe(Buffer.byteLength(small.text));
    const smallLines = small.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(smallLines.map((l) => Object.keys(l))).toEqual([['columns'], ['rows'], ['info', 'logs']]);
    expect(smallLines[1].rows).toEqual([[1]]);
    const bad = await raw({ statement: 'selec nothing', engine }, 'application/x-ndjson');
    const badLines = bad.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(badLines.map((l) => Object.keys(l))).toEqual([['columns'], ['info', 'logs']]);
    expect(badLines[1].info).toMatchObject({ state: 'ERROR', exception: expect.any(String) });
    // Client mistakes stay one JSON {message}; a client preferring JSON gets the object.
    const missing = await raw({ statement: 'select 1', engine, clusterId: 'nope' }, 'application/x-ndjson');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(missing.text)).toEqual({ message: expect.any(String) });
    const preferred = await raw({ statement: 'select 1', engine }, 'application/x-ndjson;q=0.5, application/json');
    expect(JSON.parse(preferred.text)).toMatchObject({ info: { state: 'FINISHED' }, rows: [[1]] });
  });

  it('a small result is answered in one piece, with its length, as before', async (ctx) => {
    skipUnlessInstalled(ctx);
    const r = await raw({ statement: ordered[engine](1000, 'small'), engine, maxRows: 1000 });
    expect(r.status).toBe(200);
    expect(r.headers.get('transfer-encoding')).toBeNull();
    expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(r.text));
    const body = JSON.parse(r.text);
    expect(Object.keys(body)).toEqual(['info', 'columns', 'rows', 'logs']);
    expect(JSON.stringify(body)).toBe(r.text);
    expect(body.rows.length).toBe(1000);
    const bad = await raw({ statement: 'selec nothing', engine });
    expect(bad.status).toBe(200);
    expect(JSON.parse(bad.text)).toMatchObject({ info: { state: 'ERROR' }, rows: [] });
    const missing = await raw({ statement: 'select 1', engine, clusterId: 'nope' });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toEqual({ message: expect.any(String) });
  });

  it('a client that goes away mid-result has its statement stopped in the engine and its session freed', async (ctx) => {
    skipUnlessInstalled(ctx);
    const marker = `gone_mid_result_${engine.toLowerCase()}`;
    const n = engine === 'TRINO' ? 1_000_000 : 500_000;
    const ac = new AbortController();
    const res = await fetch(`${h.url}/sql/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ statement: wide[engine](n, 20, marker), engine, maxRows: n }),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    let got = 0;
    while (got < 100_000) got += (await reader.read()).value?.length ?? 0;
    ac.abort();
    await reader.cancel().catch(() => undefined);
    const rec = await ended(marker);
    expect(rec.state).toBe('CANCELED');
    expect(rec.rows).toBeLessThan(n);
    // The engine's one session is free again: the next statement runs at once.
    const next = await sql('select 7', { engine, timeoutMs: 20_000 });
    expect(next.body.info.state).toBe('FINISHED');
    if (engine === 'TRINO') {
      // Trino itself was told: the query ended cancelled, not run to its end.
      const q = await sql(
        `select state, error_code from system.runtime.queries where query like '%''${marker}''%' and query not like '%system.runtime%'`,
        { engine },
      );
      expect(q.body.rows).toEqual([['FAILED', 'USER_CANCELED']]);
    }
  });

  it('a statement that fails after its rows started has its transfer cut, not ended', async (ctx) => {
    skipUnlessInstalled(ctx);
    // The Thrift Server ends a statement before its rows are fetched: it cannot fail midway.
    if (engine === 'SPARK_SQL') ctx.skip();
    // Fails at its 900,000th row, long after the first pages went out (Trino makes rows as they are read).
    const statement =
      'select x, 1 / (x - 900000) as cut_mid_result from (select a.x * 1000 + b.y as x ' +
      'from unnest(sequence(0, 999)) a(x) cross join unnest(sequence(0, 999)) b(y))';
    const res = await fetch(`${h.url}/sql/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ statement, engine, maxRows: 1_000_000 }),
    });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    const rec = await ended('cut_mid_result');
    expect(rec.state).toBe('ERROR');
    expect((await sql('select 8', { engine, timeoutMs: 20_000 })).body.rows).toEqual([[8]]);
  });

  it('holds a few batches of a large result, not the result, while a slow client reads it', async (ctx) => {
    skipUnlessInstalled(ctx);
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    // Live memory of this process (API and client): the least of a few samples, each after a full collection
    // (the in-process worker and clients allocate meanwhile). external includes Buffers.
    const used = async () => {
      let least = Infinity;
      for (let i = 0; i < 3; i++) {
        gc();
        const m = process.memoryUsage();
        least = Math.min(least, m.heapUsed + m.external);
        await new Promise((r) => setTimeout(r, 100));
      }
      return least;
    };
    // 1,000,000 rows of ~140 bytes: the result is ~140 MB, one engine batch (10,000 rows) ~1.4 MB.
    const n = 1_000_000;
    const width = 100;
    const marker = `slow_reader_${engine.toLowerCase()}`;
    const before = await used();
    let bytes = 0;
    let tail = '';
    let rows = 0;
    let paused: number | undefined;
    let pauseAsked = false;
    const url = new URL(`${h.url}/sql/execute`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.setEncoding('latin1');
        res.on('data', (chunk: string) => {
          bytes += chunk.length;
          // Rows are `[id,"xx…x","marker"]`, one `],[` apart; the last two characters of the previous chunk
          // join a separator split across chunks.
          const text = tail + chunk;
          rows += text.split('],[').length - 1;
          tail = text.slice(-2);
          if (!pauseAsked && bytes > 2_000_000) {
            pauseAsked = true;
            // The client stops reading for a while: the API must wait, holding what it has.
            res.pause();
            setTimeout(async () => {
              paused = (await used()) - before;
              res.resume();
            }, 3_000);
          }
        });
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ statement: wide[engine](n, width, marker), engine, maxRows: n }));
    });
    expect(status).toBe(200);
    expect(rows + 1).toBe(n);
    expect(bytes).toBeGreaterThan(n * width);
    // The whole result is `bytes` long; held in memory it would be more than that again (rows and text).
    console.log(
      `result ${(bytes / 1e6).toFixed(1)} MB; held while the client paused: ${(paused! / 1e6).toFixed(1)} MB`,
    );
    expect(paused).toBeDefined();
    expect(paused!).toBeLessThan(bytes / 4);
    expect((await ended(marker)).rows).toBe(n);
  });
});
