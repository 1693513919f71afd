// (f) SQL through the API against the floor: the same statement sent directly to the same engine with the
// protocol client the API uses (lib/sql), side by side in one run. Per engine (SPARK_SQL: the Spark Thrift
// Server; TRINO: Trino, when installed):
//   - `select 1`, sequential, API and direct calls alternating: overhead = API − direct (p50, p99)
//   - a 100,000-row result: rows/s through the API vs direct
//   - 8 concurrent clients for a fixed time: statements/s through the API vs direct (8 direct sessions)
// Targets: overhead p50 < 5 ms and p99 < 20 ms; 100,000 rows at ≥ 90 % of direct; 8 clients at ≥ 90 %.
//
//   npm run bench:sql          BENCH_N (300), BENCH_WARMUP (30), BENCH_ROWS_RUNS (5), BENCH_SECONDS (10),
//                              BENCH_CONCURRENCY (8), BENCH_CONCURRENT_WARMUP (5 s a side), BENCH_ENGINES (SPARK_SQL,TRINO)
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EngineEndpoint } from '../domain/sql-engine';
import type { SqlEngine } from '../domain/states';
import { protocols } from '../lib/sql';
import type { SqlConnection } from '../lib/sql/types';
import { killDrivers } from '../testkit/servers';
import { printHeader, printJson, printStats, printTarget, round, stats } from '../testkit/stats';
import { defer, envInt, runBench } from './lifecycle';
import { pidsMentioning, TICKS, treeTicks } from './proc-stats';
import { startBenchStack, type BenchStack } from './stack';

const N = envInt('BENCH_N', 300);
const WARMUP = envInt('BENCH_WARMUP', 30);
const ROWS_RUNS = envInt('BENCH_ROWS_RUNS', 5);
const SECONDS = envInt('BENCH_SECONDS', 10);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 8);
const CONCURRENT_WARMUP = envInt('BENCH_CONCURRENT_WARMUP', 5);
const ROWS = 100_000;
const ENGINES = (process.env.BENCH_ENGINES ?? 'SPARK_SQL,TRINO').split(',') as SqlEngine[];

/** The 100,000-row statement of each engine: two columns, a number and a string. */
const BIG: Record<SqlEngine, string> = {
  SPARK_SQL: `select id, cast(id as string) as s from range(${ROWS})`,
  TRINO: `select orderkey, comment from tpch.sf1.orders limit ${ROWS}`,
};

interface Side {
  label: string;
  run(statement: string, maxRows: number): Promise<number>;
}

/** Runs `statement` through POST /sql/execute; resolves the number of rows. */
function apiSide(s: BenchStack, engine: SqlEngine): Side {
  return {
    label: 'API',
    async run(statement, maxRows) {
      const res = await fetch(`${s.url}/sql/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ statement, engine, maxRows }),
      });
      const body = (await res.json()) as { info?: { state: string; exception?: string }; rows?: unknown[] };
      if (res.status !== 200 || body.info?.state !== 'FINISHED')
        throw new Error(`API: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      return body.rows!.length;
    },
  };
}

/** Runs `statement` on one direct session of the protocol client; resolves the number of rows. */
function directSide(conn: SqlConnection): Side {
  return {
    label: 'direct',
    async run(statement, maxRows) {
      const o = await conn.run(statement, { maxRows, timeoutMs: 600_000 });
      if (o.info.state !== 'FINISHED') throw new Error(`direct: ${o.info.state} ${o.info.exception ?? ''}`);
      return o.rows.length;
    },
  };
}

async function time(side: Side, statement: string, maxRows: number): Promise<[ms: number, rows: number]> {
  const t0 = performance.now();
  const rows = await side.run(statement, maxRows);
  return [performance.now() - t0, rows];
}

/** CPU ms of this process (the API and both sides' clients) and of the store and Temporal servers. */
interface Cpu {
  self: number;
  mongo: number;
  temporal: number;
}
function cpuNow(s: BenchStack): Cpu {
  const u = process.cpuUsage();
  // Each server is found by its port in its command line (NUL-separated arguments).
  const port = (address: string) => `\0${/:(\d+)/.exec(address.replace(/^\w+:\/\//, ''))![1]}`;
  const ms = (address: string, what: string) => (treeTicks(pidsMentioning(port(address), what)) * 1000) / TICKS;
  return {
    self: (u.user + u.system) / 1000,
    mongo: ms(s.config.MONGO_URL, 'Launcher.java'),
    temporal: ms(s.config.TEMPORAL_ADDRESS, 'temporal'),
  };
}

/** Statements/s of `callers` concurrent loops over `sides` (one side per caller) for SECONDS, and CPU ms per statement. */
async function throughput(
  s: BenchStack,
  sides: Side[],
  statement: string,
  seconds = SECONDS,
): Promise<[rate: number, cpu: Cpu]> {
  const before = cpuNow(s);
  const end = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    sides.map(async (side) => {
      while (performance.now() < end) {
        await side.run(statement, 1000);
        done++;
      }
    }),
  );
  const after = cpuNow(s);
  const per = (k: keyof Cpu) => round((after[k] - before[k]) / done, 2);
  return [done / seconds, { self: per('self'), mongo: per('mongo'), temporal: per('temporal') }];
}

async function benchEngine(s: BenchStack, engine: SqlEngine): Promise<Record<string, number>> {
  console.log(`\n## ${engine}`);
  const t0 = performance.now();
  const api = apiSide(s, engine);
  await api.run('select 1', 10); // starts the engine and waits for it
  const rec = await s.store.db.collection('sqlEngines').findOne({ type: engine, clusterId: 'default' });
  const endpoint = rec!.endpoint as EngineEndpoint;
  console.log(`  engine up in ${((performance.now() - t0) / 1000).toFixed(1)} s at ${endpoint.host}:${endpoint.port}`);
  const conns = await Promise.all(Array.from({ length: CONCURRENCY }, () => protocols[engine].connect(endpoint)));
  defer(`${engine} direct sessions`, () => Promise.all(conns.map((c) => c.close())));
  const direct = directSide(conns[0]);

  for (let i = 0; i < WARMUP; i++) await Promise.all([api.run('select 1', 10), direct.run('select 1', 10)]);
  const lat: Record<'API' | 'direct', number[]> = { API: [], direct: [] };
  for (let i = 0; i < N; i++) {
    // Alternating order, so neither side always runs right after the other.
    for (const side of i % 2 ? [api, direct] : [direct, api])
      lat[side.label as 'API' | 'direct'].push((await time(side, 'select 1', 10))[0]);
  }
  printStats(`select 1, ${N} sequential calls each`, [
    ['API', lat.API],
    ['direct', lat.direct],
  ]);
  const [a, d] = [stats(lat.API), stats(lat.direct)];
  const overheadP50 = a.p50 - d.p50;
  const overheadP99 = a.p99 - d.p99;
  printTarget('overhead p50', overheadP50, '<', 5, 'ms');
  printTarget('overhead p99', overheadP99, '<', 20, 'ms');

  const rowsPerS: Record<'API' | 'direct', number[]> = { API: [], direct: [] };
  for (let i = 0; i < ROWS_RUNS; i++) {
    for (const side of i % 2 ? [api, direct] : [direct, api]) {
      const [ms, rows] = await time(side, BIG[engine], ROWS);
      if (rows !== ROWS) throw new Error(`${side.label}: ${rows} rows, expected ${ROWS}`);
      rowsPerS[side.label as 'API' | 'direct'].push((rows / ms) * 1000);
    }
  }
  const bigApi = stats(rowsPerS.API).p50;
  const bigDirect = stats(rowsPerS.direct).p50;
  console.log(
    `\n${ROWS} rows (${BIG[engine]}), median of ${ROWS_RUNS}: API ${round(bigApi, 0)} rows/s, direct ${round(bigDirect, 0)} rows/s`,
  );
  printTarget('API / direct rows/s', (100 * bigApi) / bigDirect, '>', 90, '%');

  // Both paths warmed at this concurrency first: the store's JIT compiles the API's writes (audit, history) in
  // the first seconds of it, which would otherwise count against the API alone.
  const apiCallers = Array.from({ length: CONCURRENCY }, () => api);
  await throughput(s, apiCallers, 'select 1', CONCURRENT_WARMUP);
  await throughput(s, conns.map(directSide), 'select 1', CONCURRENT_WARMUP);
  const [apiRate, apiCpu] = await throughput(s, apiCallers, 'select 1');
  const [directRate, directCpu] = await throughput(s, conns.map(directSide), 'select 1');
  console.log(
    `\n${CONCURRENCY} concurrent clients, ${SECONDS} s each: API ${round(apiRate)} statements/s, direct ${round(directRate)} statements/s`,
  );
  // Where the API's share goes: on two cores every CPU ms of it is taken from the engine.
  for (const [label, c] of [
    ['API', apiCpu],
    ['direct', directCpu],
  ] as const)
    console.log(
      `  CPU ms a statement, ${label.padEnd(6)}: this process ${c.self}, MongoDB-protocol server ${c.mongo}, Temporal ${c.temporal}`,
    );
  printTarget('API / direct statements/s', (100 * apiRate) / directRate, '>', 90, '%');
  return {
    apiP50: round(a.p50, 2),
    apiP99: round(a.p99, 2),
    directP50: round(d.p50, 2),
    directP99: round(d.p99, 2),
    overheadP50: round(overheadP50, 2),
    overheadP99: round(overheadP99, 2),
    rowsPerSApi: round(bigApi, 0),
    rowsPerSDirect: round(bigDirect, 0),
    concurrentApi: round(apiRate, 1),
    concurrentDirect: round(directRate, 1),
    concurrentApiCpuMs: apiCpu.self + apiCpu.mongo + apiCpu.temporal,
    concurrentDirectCpuMs: directCpu.self + directCpu.mongo + directCpu.temporal,
  };
}

runBench('sql', 1200, async () => {
  printHeader('bench:sql — POST /sql/execute against the same statement sent directly to the same engine');
  const s = await startBenchStack();
  defer('engines', async () => {
    // Stopped through their workflows first: a killed engine would be restarted while the worker runs.
    for (const type of ENGINES) {
      const id = type === 'TRINO' ? 'trino-default' : 'sparksql-default';
      await fetch(`${s.url}/sql/engine/${id}`, { method: 'DELETE' }).catch(() => undefined);
    }
    const n = await killDrivers(s.config.DRIVER_DIR);
    if (n) console.log(`  killed ${n} leftover engine process group(s)`);
  });
  const figures: Record<string, unknown> = {};
  for (const engine of ENGINES) {
    if (engine === 'TRINO' && !existsSync(path.join(s.config.TRINO_HOME, 'bin', 'launcher'))) {
      console.log('\n## TRINO: not installed (scripts/setup.sh without SKIP_TRINO=1); skipped');
      continue;
    }
    figures[engine] = await benchEngine(s, engine);
  }
  printJson('sql', figures);
});
