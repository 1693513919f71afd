// The SQL protocol clients (lib/sql) against real engines launched by the local adapter: Spark's Thrift
// Server (HiveServer2 protocol) and Trino. Exact types and values, maxRows, the engine's own errors,
// timeouts and cancels that stop the work in the engine, concurrent statements through one pool, and
// the Thrift Server's operation log. Both engines start side by side in beforeAll (JVM start-up is slow).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeEngine } from '../../activities/adapters/engine-probe';
import { createLocalAdapter } from '../../activities/adapters/local/adapter';
import { isFinalPhase, type ClusterAdapter, type DriverSpec } from '../../domain/driver';
import { sqlEngineDriverId, type EngineEndpoint, type SqlEngine } from '../../domain/sql-engine';
import { loadConfig } from '../../lib/config';
import { createSqlPool, protocols, type SqlPool } from '../../lib/sql';
import type { RowSink, RunOptions, StatementOutcome } from '../../lib/sql/types';
import { trinoTestHome } from '../../testkit/trino';
import { eventually } from '../../testkit/wait';
import { sparkSpec } from '../../testkit/spark-spec';

const base = loadConfig();
const trinoInstalled = existsSync(path.join(base.TRINO_HOME, 'bin', 'launcher.py'));
const ENGINES: SqlEngine[] = trinoInstalled ? ['SPARK_SQL', 'TRINO'] : ['SPARK_SQL'];

let tmp: string;
let adapter: ClusterAdapter;
const endpoints: Partial<Record<SqlEngine, EngineEndpoint>> = {};
const pools: Partial<Record<SqlEngine, SqlPool>> = {};

const spec = (type: SqlEngine): DriverSpec => ({
  driverId: sqlEngineDriverId('sql-protocols', type, 1),
  role: 'sql-engine',
  engine: { type, stateKey: 'sql-protocols' },
  env: {},
  labels: {},
  spark: sparkSpec({
    name: `e2e ${type}`,
    language: 'SCALA',
    clusterName: 'default',
    memorySettings: { dynamicAllocation: false, driverMemory: '1g' },
  }),
});

async function start(type: SqlEngine): Promise<void> {
  const s = spec(type);
  const { endpoint } = await adapter.launch(s);
  if (!endpoint) throw new Error(`${type}: the adapter gave no endpoint`);
  await eventually(
    async () => {
      const st = await adapter.status(s.driverId);
      if (isFinalPhase(st.phase))
        throw Object.assign(new Error(`${type} engine ended: ${st.message}`), { fatal: true });
      return probeEngine(type, endpoint, 2_000);
    },
    170_000,
    250,
  );
  endpoints[type] = endpoint;
  pools[type] = createSqlPool(protocols[type], { maxSessions: 4, idleMs: 60_000 });
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'sql-protocols-'));
  adapter = createLocalAdapter({
    SPARK_HOME: base.SPARK_HOME,
    PYTHON: base.PYTHON,
    DRIVER_DIR: path.join(tmp, 'drivers'),
    STACK_DIR: path.join(tmp, 'stack'),
    LOCAL_SPARK_THREADS: 2,
    // Trino with the tests' JVM options (testkit/trino.ts says why).
    TRINO_HOME: trinoTestHome(path.join(tmp, 'trino-home'), base.TRINO_HOME),
  });
  await Promise.all(ENGINES.map(start));
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(pools).map((p) => p.close()));
  if (adapter) for (const type of ENGINES) await adapter.remove(spec(type).driverId);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const run = (type: SqlEngine, statement: string, opts: Partial<RunOptions> = {}): Promise<StatementOutcome> =>
  pools[type]!.run(endpoints[type]!, statement, { maxRows: 1000, timeoutMs: 120_000, ...opts });

/** Per engine: statements in its dialect, and what they must give. */
const DIALECT: Record<SqlEngine, { types: string; typeNames: string[]; slow: string; rows: string }> = {
  SPARK_SQL: {
    types:
      "select cast(12.34 as decimal(10,2)) d, 9007199254740993L b, date'2024-01-02' dt, timestamp'2024-01-02 03:04:05.123' ts, " +
      "array(1, 2) a, map(1, 'a') m, named_struct('a', 1, 'b', 'x\"y') s, cast(null as int) n",
    typeNames: ['DECIMAL', 'BIGINT', 'DATE', 'TIMESTAMP', 'ARRAY', 'MAP', 'STRUCT', 'INT'],
    // Both task slots of local[2] busy for hours unless cancelled.
    slow: 'select count(*) from range(0, 1000000000000, 1, 2)',
    rows: 'select id, cast(id as string) s from range(100000)',
  },
  TRINO: {
    types:
      "select cast(12.34 as decimal(10,2)) d, 9007199254740993 b, date '2024-01-02' dt, timestamp '2024-01-02 03:04:05.123' ts, " +
      "array[1, 2] a, map(array[1], array['a']) m, cast(row(1, 'x\"y') as row(a integer, b varchar)) s, cast(null as integer) n",
    typeNames: ['DECIMAL', 'BIGINT', 'DATE', 'TIMESTAMP', 'ARRAY', 'MAP', 'ROW', 'INTEGER'],
    slow: 'select count(*) from tpch.sf1000.lineitem',
    rows:
      'select id, cast(id as varchar) s from (select a * 1000 + b as id from unnest(sequence(0, 99)) t(a) ' +
      'cross join unnest(sequence(0, 999)) u(b)) order by id',
  },
};

/** Whether the engine still runs the statement: STS by a job that needs its task slots, Trino by its query list. */
async function stillRunning(type: SqlEngine, statement: string): Promise<boolean> {
  if (type === 'TRINO') {
    const { host, port } = endpoints.TRINO!;
    const res = await fetch(`http://${host}:${port}/v1/query`, { headers: { 'X-Trino-User': 'e2e' } });
    const queries = (await res.json()) as { query: string; state: string }[];
    return queries.some((q) => q.query === statement && !['FINISHED', 'FAILED'].includes(q.state));
  }
  const probe = await run(type, 'select count(*) from range(10, 20, 1, 2)', { timeoutMs: 30_000 });
  return probe.info.state !== 'FINISHED';
}

describe.each(ENGINES)('%s through its protocol client', (type) => {
  const d = DIALECT[type];

  it('returns exact types and values, and the statement log', async () => {
    const o = await run(type, d.types);
    expect(o.info).toMatchObject({
      state: 'FINISHED',
      creationTime: expect.any(Number),
      completionTime: expect.any(Number),
    });
    expect(o.info.startTime).toBeGreaterThanOrEqual(o.info.creationTime);
    expect(o.columns.map((c) => c.type)).toEqual(d.typeNames);
    expect(o.columns[0]).toEqual({ name: 'd', type: 'DECIMAL', index: 1, precision: 10, scale: 2, comment: null });
    expect(o.columns[7]).toMatchObject({ name: 'n', index: 8, precision: 0, scale: 0 });
    expect(o.rows).toEqual([
      [
        '12.34',
        '9007199254740993',
        '2024-01-02',
        '2024-01-02T03:04:05.123',
        [1, 2],
        { 1: 'a' },
        { a: 1, b: 'x"y' },
        null,
      ],
    ]);
    expect(o.logs.length).toBeGreaterThan(0);
  });

  it('fetches no more than maxRows, and all of a large result exactly', async () => {
    const few = await run(type, d.rows, { maxRows: 7 });
    expect(few.info.state).toBe('FINISHED');
    expect(few.rows).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => [i, String(i)]));
    const all = await run(type, d.rows, { maxRows: 200_000 });
    expect(all.rows).toHaveLength(100_000);
    expect(all.rows[99_999]).toEqual([99_999, '99999']);
  });

  it('resolves a statement the engine refuses as ERROR with its message', async () => {
    const o = await run(type, 'selec 1');
    expect(o.info.state).toBe('ERROR');
    expect(o.info.exception).toMatch(/selec/);
    expect(o.rows).toEqual([]);
    const missing = await run(type, 'select * from no_such_table_here');
    expect(missing.info).toMatchObject({
      state: 'ERROR',
      exception: expect.stringMatching(/no_such_table_here|schema/i),
    });
  });

  it('cancels a statement past its timeout in the engine: TIMEDOUT', async () => {
    const t0 = Date.now();
    const o = await run(type, d.slow, { timeoutMs: 2_000 });
    expect(o.info).toMatchObject({ state: 'TIMEDOUT', exception: expect.stringMatching(/timed out after 2000 ms/) });
    expect(Date.now() - t0).toBeLessThan(15_000);
    await eventually(async () => !(await stillRunning(type, d.slow)), 30_000, 500);
  });

  it('cancels a statement whose client went away: CANCELED', async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 1_500);
    const o = await run(type, d.slow, { signal: abort.signal });
    expect(o.info.state).toBe('CANCELED');
    await eventually(async () => !(await stillRunning(type, d.slow)), 30_000, 500);
  });

  // The API's path: rows as JSON text without the values made (lib/sql/hive-json.ts: the same bytes
  // JSON.stringify gives; lib/sql/trino-json.ts: Trino's own text of the same values, where nothing needs
  // converting, else the values serialised).
  it('gives a sink that takes JSON the rows as the values serialise', async () => {
    const q = (e: string) => `if(x = 1, null, ${e})`;
    const common =
      `${q('true')} b, ${q('cast(-5 as tinyint)')} t, ${q('cast(300 as smallint)')} sm, ${q('-7')} i, ` +
      `${q("'caf\u00e9 \u4e2d'")} u, ${q('cast(12.5 as decimal(5,1))')} dec`;
    const wide: Record<SqlEngine, string> = {
      SPARK_SQL:
        `select ${common}, ${q('9007199254740993L')} big, ${q('x - 9007199254740993L')} neg, ${q('cast(1.5 as float)')} f, ` +
        `${q("cast('NaN' as double)")} nan, ${q("cast('-Infinity' as double)")} inf, ${q('0.1d')} dbl, ` +
        `${q("concat('q', char(34), 'b', char(92), 'c', char(10), 'd', char(1))")} esc, ` +
        `${q("cast('abc' as binary)")} bin, ${q("timestamp'2024-01-02 03:04:05'")} ts, ${q("date'2024-01-02'")} dt, ` +
        `${q("array(named_struct('k', 'x,y', 'v', map('a', 1)))")} cx from (select id x from range(3))`,
      TRINO:
        `select ${common}, ${q('x * 1000000007')} big, ${q("real '1.5'")} f, ${q('nan()')} nan, ` +
        `${q('-infinity()')} inf, ${q('0.1e0')} dbl, ${q("'q' || chr(34) || 'b' || chr(92) || 'c' || chr(10) || chr(1)")} esc, ` +
        `${q("to_utf8('abc')")} bin, ${q("date '2024-01-02'")} dt, ${q("array[map(array['a'], array[1])]")} cx ` +
        'from (values 0, 1, 2) t(x)',
    };
    // [statement, maxRows, whether every batch must come as text]
    const cases: [string, number, boolean][] = [
      [d.types, 10, type === 'SPARK_SQL'], // Trino: a TIMESTAMP and a ROW are rewritten, and a 16-digit BIGINT
      [wide[type], 10, true],
      [d.rows, 54_321, true], // stops inside a batch
    ];
    for (const [statement, maxRows, allText] of cases) {
      const values = await run(type, statement, { maxRows });
      expect(values.info.state).toBe('FINISHED');
      const pieces: string[] = [];
      let asValues = 0;
      const sink: RowSink = {
        begin: () => undefined,
        rows: (b) => void (asValues++, pieces.push(JSON.stringify(b).slice(1, -1))),
        jsonRows: (b) => void pieces.push(b.encode(0, b.count, '', '').toString()),
      };
      const o = await run(type, statement, { maxRows, sink });
      expect(o.info.state).toBe('FINISHED');
      expect(o.rowCount).toBe(values.rows.length);
      const json = `[${pieces.join(',')}]`;
      if (type === 'SPARK_SQL') expect(json).toBe(JSON.stringify(values.rows));
      else expect(JSON.parse(json)).toEqual(values.rows);
      if (allText) expect(asValues).toBe(0);
      else expect(asValues).toBeGreaterThan(0);
    }
  });

  it('runs 8 concurrent statements through one pool of 4 sessions', async () => {
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => run(type, `select ${i} + 1 as x`)));
    expect(outcomes.map((o) => o.info.state)).toEqual(Array(8).fill('FINISHED'));
    expect(outcomes.map((o) => o.rows)).toEqual(Array.from({ length: 8 }, (_, i) => [[i + 1]]));
  });
});
