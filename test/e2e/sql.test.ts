// SQL end to end: HTTP API → engine workflow → local adapter → a real Spark Thrift Server and a real Trino;
// statements through the API's pooled sessions, exact typed values, query history, engine lifecycle.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../lib/config';
import { groupMembers } from '../../testkit/proc-groups';
import { trinoTestHome } from '../../testkit/trino';
import { call, eventually, startHarness, type Harness } from '../harness';

let h: Harness;
const sql = (statement: string, extra: Record<string, unknown> = {}) =>
  call(h, 'POST', '/sql/execute', { statement, ...extra });
const engines = async (clusterId = 'default') =>
  (await call(h, 'GET', `/sql/engine/${clusterId}`)).body as { id: string; type: string; state: string }[];
const trinoInstalled = () => {
  try {
    return readFileSync(path.join(h.config.TRINO_HOME, 'bin', 'launcher')).length > 0;
  } catch {
    return false;
  }
};

/** Kills an engine's whole process group with SIGKILL, as a crash would. */
function killEngine(driverId: string): void {
  const pid = Number(readFileSync(path.join(h.config.DRIVER_DIR, driverId, 'pid'), 'utf8').trim());
  process.kill(-pid, 'SIGKILL');
}

beforeAll(async () => {
  // Trino with the tests' JVM options (testkit/trino.ts says why).
  const TRINO_HOME = trinoTestHome(path.join(inject('testDir'), 'trino-home'), loadConfig().TRINO_HOME);
  h = await startHarness({ env: { SQL_ENGINE_START_TIMEOUT_MS: '120000', TRINO_HOME } });
});
afterAll(async () => {
  // Engines are drivers of this harness: stop them with it.
  for (const e of h ? await engines().catch(() => []) : []) await call(h, 'DELETE', `/sql/engine/${e.id}`);
  await h?.stop();
});

// Two lanes run side by side, each case of a lane after the one before it: the default cluster's engines, and the
// engines of clusters of their own (their own cluster ids, hence engine workflows; two of them on harnesses of
// their own). Most of each lane's time is one JVM starting on one core; side by side, both cores are used.
// The Trino case stays after the SPARK_SQL ones: it expects the default cluster's SPARK_SQL engine in the list.
// Concurrent cases take `expect` from their context, so a failure is told against the right case.
describe.concurrent('on the default cluster', () => {
  describe.sequential('SQL on the Spark Thrift Server (SPARK_SQL)', () => {
    it('starts the engine for the first statement on a cluster that has none', async ({ expect }) => {
      expect(await engines()).toEqual([]);
      const r = await sql('select 1 as one');
      expect(r.status).toBe(200);
      expect(r.body.info.state).toBe('FINISHED');
      expect(r.body.columns).toEqual([{ name: 'one', type: 'INT', index: 1, precision: 0, scale: 0, comment: null }]);
      expect(r.body.rows).toEqual([[1]]);
      const base = '/api/v1/sql/engine/sparksql-default';
      expect(await engines()).toEqual([
        {
          id: 'sparksql-default',
          type: 'SPARK_SQL',
          state: 'RUNNING',
          uiUrl: `${base}/ui/`,
          historyUrl: `${base}/history/`,
        },
      ]);
      // Its Spark UI through the API (api/spark-ui/): the Thrift Server's application, with the statement's job.
      const apps = await call(h, 'GET', '/sql/engine/sparksql-default/ui/api/v1/applications');
      expect(apps.status).toBe(200);
      expect(apps.body).toHaveLength(1);
    });

    it('returns exact values: decimal, bigint above 2^53, date, timestamp, array, map, struct, null', async ({
      expect,
    }) => {
      const r = await sql(
        "select cast('12345678.91' as decimal(10,2)) d, 9007199254740993L b, 42L small, date'2024-02-29' dt, " +
          "timestamp'2024-02-29 13:14:15.123' ts, array(1,2,3) a, map('k', 1) m, named_struct('x', 1, 'y', 'two') s, " +
          "cast(null as int) n, cast('hi' as binary) bin",
      );
      expect(r.body.info.state).toBe('FINISHED');
      expect(r.body.rows).toEqual([
        [
          '12345678.91',
          '9007199254740993',
          42,
          '2024-02-29',
          '2024-02-29T13:14:15.123',
          [1, 2, 3],
          { k: 1 },
          { x: 1, y: 'two' },
          null,
          'aGk=',
        ],
      ]);
      const d = r.body.columns[0];
      expect(d).toMatchObject({ name: 'd', type: 'DECIMAL', precision: 10, scale: 2, index: 1 });
      expect(r.body.logs.length).toBeGreaterThan(0);
      expect(r.body.columns.map((c: { type: string }) => c.type)).toEqual([
        'DECIMAL',
        'BIGINT',
        'BIGINT',
        'DATE',
        'TIMESTAMP',
        'ARRAY',
        'MAP',
        'STRUCT',
        'INT',
        'BINARY',
      ]);
    });

    it('bounds the rows by maxRows', async ({ expect }) => {
      const r = await sql('select id from range(5000)', { maxRows: 10 });
      expect(r.body.rows).toHaveLength(10);
      const d = await sql('select id from range(5000)');
      expect(d.body.rows).toHaveLength(1000);
    });

    it('keeps tables across statements', async ({ expect }) => {
      for (const s of [
        'create table if not exists people (name string, age int) using parquet',
        "insert into people values ('ada', 36), ('alan', 41)",
      ]) {
        expect((await sql(s)).body.info.state).toBe('FINISHED');
      }
      const r = await sql('select name, age from people order by age');
      expect(r.body.rows).toEqual([
        ['ada', 36],
        ['alan', 41],
      ]);
    });

    it('answers a syntax error with 200 and info.state ERROR carrying the engine message', async ({ expect }) => {
      const r = await sql('selec nothing from');
      expect(r.status).toBe(200);
      expect(r.body.info.state).toBe('ERROR');
      expect(r.body.info.exception).toMatch(/syntax|PARSE_SYNTAX_ERROR|mismatched/i);
      expect(r.body.rows).toEqual([]);
    });

    it('cancels a statement past its timeout, and the engine goes on answering', async ({ expect }) => {
      const started = Date.now();
      const r = await sql("select reflect('java.lang.Thread', 'sleep', cast(20000 as bigint))", { timeoutMs: 1500 });
      expect(r.body.info.state).toBe('TIMEDOUT');
      expect(Date.now() - started).toBeLessThan(15_000);
      expect((await sql('select 2')).body.rows).toEqual([[2]]);
    });

    it('cancels the statement of a client that disconnects', async ({ expect }) => {
      const ac = new AbortController();
      const statement = "select reflect('java.lang.Thread', 'sleep', cast(30000 as bigint)) as slept_for_disconnect";
      const req = fetch(`${h.url}/sql/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ statement }),
        signal: ac.signal,
      }).catch((e: Error) => e);
      await new Promise((r) => setTimeout(r, 1500));
      ac.abort();
      expect(await req).toBeInstanceOf(Error);
      const entry = await eventually(
        async () => {
          const page = (await call(h, 'GET', `/sql/history?search=slept_for_disconnect`)).body;
          const e = page.content?.[0];
          return e && e.state !== 'RUNNING' ? e : undefined;
        },
        20_000,
        250,
      );
      expect(entry.state).toBe('CANCELED');
      expect((await sql('select 6')).body.rows).toEqual([[6]]);
    });

    it('serves 8 concurrent clients on one engine', async ({ expect }) => {
      const all = await Promise.all(
        Array.from({ length: 8 }, (_, i) => sql(`select ${i} as i, count(*) c from range(${1000 * (i + 1)})`)),
      );
      expect(all.map((r) => r.body.rows)).toEqual(Array.from({ length: 8 }, (_, i) => [[i, 1000 * (i + 1)]]));
    });

    it('restarts an engine killed with SIGKILL; the next statement works and the tables are still there', async ({
      expect,
    }) => {
      const before = await h.store.db.collection('sqlEngines').findOne({ _id: 'sparksql-default' as never });
      killEngine(before!.driverId);
      const r = await sql('select name from people order by name');
      expect(r.body.info.state).toBe('FINISHED');
      expect(r.body.rows).toEqual([['ada'], ['alan']]);
      const after = await h.store.db.collection('sqlEngines').findOne({ _id: 'sparksql-default' as never });
      expect(after!.generation).toBeGreaterThan(before!.generation);
    });

    it('records every statement in the query history', async ({ expect }) => {
      const page = (await call(h, 'GET', '/sql/history?size=100')).body;
      const states = page.content.map((e: { state: string }) => e.state);
      expect(states).toContain('FINISHED');
      expect(states).toContain('ERROR');
      expect(states).toContain('TIMEDOUT');
      const err = page.content.find((e: { state: string }) => e.state === 'ERROR');
      expect(err).toMatchObject({
        clusterId: 'default',
        engine: 'SPARK_SQL',
        engineId: 'sparksql-default',
        statement: 'selec nothing from',
      });
    });

    it('answers client mistakes with 4xx and a message', async ({ expect }) => {
      expect((await call(h, 'POST', '/sql/execute', {})).status).toBe(409);
      expect((await sql('select 1', { clusterId: 'nope' })).status).toBe(404);
      expect((await sql('select 1', { engine: 'HIVE' })).status).toBe(409);
      expect((await sql('select 1', { maxRows: 0 })).status).toBe(409);
      const over = await sql('select 1', { maxRows: 1e9 });
      expect(over.status).toBe(402);
      expect(over.body.message).toMatch(/maxRows/);
      expect(
        (await call(h, 'POST', '/sql/execute', '{"statement":', { 'content-type': 'application/json' })).status,
      ).toBe(400);
      expect((await call(h, 'DELETE', '/sql/engine/sparksql-nope')).status).toBe(404);
      expect((await call(h, 'GET', '/sql/engine/nope')).status).toBe(404);
      expect((await call(h, 'POST', '/sql/engine/default', { type: 'HIVE' })).status).toBe(409);
      // Ilum's engine creation body is optional: none is read as the defaults (here: the cluster is unknown).
      expect((await call(h, 'POST', '/sql/engine/nope')).status).toBe(404);
    });
  });

  describe.sequential('SQL on Trino (TRINO)', () => {
    it('runs tpch and memory-catalog statements with exact values', async ({ expect, skip }) => {
      if (!trinoInstalled()) skip();
      const r = await sql(
        "select cast('12345678.91' as decimal(10,2)) d, 9007199254740993 b, date '2024-02-29' dt, " +
          "timestamp '2024-02-29 13:14:15.123' ts, array[1,2,3] a, map(array['k'], array[1]) m, " +
          "cast(row(1, 'two') as row(x integer, y varchar)) s, cast(null as integer) n",
        { engine: 'TRINO' },
      );
      expect(r.status).toBe(200);
      expect(r.body.info.state).toBe('FINISHED');
      expect(r.body.rows).toEqual([
        [
          '12345678.91',
          '9007199254740993',
          '2024-02-29',
          '2024-02-29T13:14:15.123',
          [1, 2, 3],
          { k: 1 },
          { x: 1, y: 'two' },
          null,
        ],
      ]);
      expect(r.body.columns[0]).toMatchObject({ type: 'DECIMAL', precision: 10, scale: 2 });
      const n = await sql('select count(*) from tpch.tiny.nation', { engine: 'TRINO' });
      expect(n.body.rows).toEqual([[25]]);
      await sql('create table memory.default.kv (k varchar, v bigint)', { engine: 'TRINO' });
      await sql("insert into memory.default.kv values ('a', 1), ('b', 2)", { engine: 'TRINO' });
      expect((await sql('select k, v from memory.default.kv order by k', { engine: 'TRINO' })).body.rows).toEqual([
        ['a', 1],
        ['b', 2],
      ]);
      const bad = await sql('select from where', { engine: 'TRINO' });
      expect(bad.body.info.state).toBe('ERROR');
      expect(bad.body.info.exception).toMatch(/mismatched|syntax/i);
      expect((await engines()).map((e) => e.id).sort()).toEqual(['sparksql-default', 'trino-default']);
    });
  });
});

describe.concurrent('on clusters of their own', () => {
  describe.sequential('SQL engine lifecycle', () => {
    let clusterId: string;
    beforeAll(async () => {
      const created = await call(h, 'POST', '/cluster', { name: 'sql-life', type: 'local' });
      expect(created.status).toBe(200);
      clusterId = created.body.clusterId;
    });

    it('creates asynchronously, replaces a starting engine with force, then runs', async ({ expect }) => {
      const a = await call(h, 'POST', `/sql/engine/${clusterId}`, { type: 'SPARK_SQL', async: true });
      expect(a.status).toBe(200);
      expect(a.body).toEqual({ id: `sparksql-${clusterId}` });
      expect((await engines(clusterId))[0]).toMatchObject({ id: a.body.id, state: 'STARTING' });
      const f = await call(h, 'POST', `/sql/engine/${clusterId}`, { type: 'SPARK_SQL', force: true });
      expect(f.status).toBe(200);
      expect(await engines(clusterId)).toEqual([
        expect.objectContaining({ id: a.body.id, type: 'SPARK_SQL', state: 'RUNNING' }),
      ]);
      const rec = await h.store.db.collection('sqlEngines').findOne({ _id: a.body.id as never });
      expect(rec!.generation).toBeGreaterThanOrEqual(2);
      const r = await sql('select 3', { clusterId });
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 200, body: { rows: [[3]] } });
    });

    it('deletes an engine: it stops and leaves the list', async ({ expect }) => {
      const id = `sparksql-${clusterId}`;
      const rec = await h.store.db.collection('sqlEngines').findOne({ _id: id as never });
      expect((await call(h, 'DELETE', `/sql/engine/${id}`)).status).toBe(200);
      expect(await engines(clusterId)).toEqual([]);
      const pid = Number(readFileSync(path.join(h.config.DRIVER_DIR, rec!.driverId, 'pid'), 'utf8').trim());
      // No process of it runs (one that has ended may wait a second for PID 1 to reap it: testkit/proc-groups.ts).
      expect(groupMembers(pid)).toEqual([]);
    });

    it('stops the engines of a deleted cluster', async ({ expect }) => {
      // Status and body whole: a failure shows the API's message (ci10 saw one after 10.5 s without rows).
      const r = await sql('select 4', { clusterId });
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 200, body: { rows: [[4]] } });
      expect(await engines(clusterId)).toHaveLength(1);
      expect((await call(h, 'DELETE', `/cluster/${clusterId}`)).status).toBe(200);
      expect(await h.store.db.collection('sqlEngines').countDocuments({ clusterId })).toBe(0);
    });
  });

  describe.sequential('SQL engine idle stop', () => {
    let idle: Harness;
    let clusterId: string;
    beforeAll(async () => {
      // No Trino on this harness's host, as after a setup with SKIP_TRINO=1.
      idle = await startHarness({ env: { SQL_ENGINE_IDLE_MS: '8000', TRINO_HOME: '/nonexistent/trino-server' } });
      // A cluster of its own: engine workflow ids derive from the cluster id, and both harnesses share Temporal.
      clusterId = (await call(idle, 'POST', '/cluster', { name: 'sql-idle', type: 'local' })).body.clusterId;
    });
    afterAll(async () => idle?.stop());

    it('stops an engine that ran no statement for SQL_ENGINE_IDLE_MS', async ({ expect }) => {
      const r = await call(idle, 'POST', '/sql/execute', { statement: 'select 5', clusterId });
      expect({ status: r.status, body: r.body }).toMatchObject({ status: 200, body: { rows: [[5]] } });
      expect((await call(idle, 'GET', `/sql/engine/${clusterId}`)).body).toHaveLength(1);
      await eventually(
        async () => ((await call(idle, 'GET', `/sql/engine/${clusterId}`)).body.length === 0 ? true : undefined),
        60_000,
        500,
      );
    });

    it('answers TRINO requests with 409 saying how to install Trino when it is not installed', async ({ expect }) => {
      const r = await call(idle, 'POST', '/sql/execute', { statement: 'select 1', engine: 'TRINO', clusterId });
      expect(r.status).toBe(409);
      expect(r.body.message).toMatch(/SKIP_TRINO/);
      expect((await call(idle, 'GET', `/sql/engine/${clusterId}`)).body).toEqual([
        { id: `trino-${clusterId}`, type: 'TRINO', state: 'FAILED' },
      ]);
      expect((await call(idle, 'DELETE', `/sql/engine/trino-${clusterId}`)).status).toBe(200);
    });
  });

  describe.sequential('SQL engines across a restart of the worker and the API', () => {
    it('leaves a running engine running: the new processes use the same engine', async ({ expect }) => {
      let a = await startHarness();
      const clusterId = (await call(a, 'POST', '/cluster', { name: 'sql-restart', type: 'local' })).body.clusterId;
      expect((await call(a, 'POST', '/sql/execute', { statement: 'select 7', clusterId })).body.rows).toEqual([[7]]);
      const before = await a.store.db.collection('sqlEngines').findOne({ clusterId });
      const keep = {
        MONGO_DB: a.config.MONGO_DB,
        TASK_QUEUE: a.config.TASK_QUEUE,
        DRIVER_DIR: a.config.DRIVER_DIR,
        SQL_DATA_DIR: a.config.SQL_DATA_DIR,
      };
      await a.stop();
      a = await startHarness({ env: keep });
      try {
        const r = await call(a, 'POST', '/sql/execute', { statement: 'select 8', clusterId });
        expect(r.body.rows).toEqual([[8]]);
        const after = await a.store.db.collection('sqlEngines').findOne({ clusterId });
        expect(after).toMatchObject({ state: 'RUNNING', generation: before!.generation, driverId: before!.driverId });
      } finally {
        await call(a, 'DELETE', `/sql/engine/sparksql-${clusterId}`);
        await a.stop();
      }
    });
  });
});
