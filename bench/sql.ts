// (f) SQL through the API against the floor: the same statement sent directly to the same engine with the
// protocol client the API uses (lib/sql), side by side in one run. Per engine (SPARK_SQL: the Spark Thrift
// Server; TRINO: Trino, when installed):
//   - `select 1`, sequential, API and direct calls alternating: overhead = API − direct (p50, p99)
//   - a 100,000-row result: rows/s through the API (as one JSON object, and as JSON lines parsed as they
//     arrive) vs direct
//   - 8 concurrent clients for a fixed time: statements/s through the API vs direct (8 direct sessions), and
//     the CPU ms a statement cost this process, the MongoDB-protocol server and Temporal on each side
// Targets: overhead p50 < 5 ms and p99 < 20 ms; 100,000 rows at ≥ 90 % of direct; 8 clients at ≥ 90 %.
// Over 300 lines on purpose: one benchmark's three phases, for both sides and both engines, read top to bottom;
// what it shares with the other benches (stack, statistics, CPU counters) already lives in bench/ and testkit/.
//
// The API runs as its own process, as deployed (BENCH_API=in-process puts it in this process, beside both
// sides' clients, as before 2026-11-27): in one process the API's JSON writing and its client's reading share
// one event loop with the direct side's client, which no deployment does.
//
// The API's client here is node:http with a keep-alive Agent (one socket per concurrent caller): what is
// measured is the API's cost, and on two cores every CPU ms this process spends is taken from the engine.
// undici's fetch (Node's global fetch) cost 0.7-2.5 ms more CPU a call than node:http here (0.8 ms against
// bench/sql-api-cpu.ts's stand-in at 40/s), which the direct side never pays. BENCH_CLIENT=fetch brings it back.
//
//   npm run bench:sql          BENCH_N (300), BENCH_WARMUP (30), BENCH_ROWS_RUNS (15), BENCH_ROWS_WARMUP (at least
//                              15 rounds of the three sides, then on until a round's time is steady),
//                              BENCH_ROWS_WARMUP_MAX (45), BENCH_SECONDS (60),
//                              BENCH_CONCURRENCY (8), BENCH_CONCURRENT_WARMUP (at least 60 s a side, in alternating
//                              10 s slices, then on until the rates are steady), BENCH_CONCURRENT_WARMUP_MAX (300),
//                              BENCH_CONCURRENT_ROUNDS (6: BENCH_SECONDS a side in alternating rounds; the ratio of
//                              each round is printed too), BENCH_ENGINES (SPARK_SQL,TRINO),
//                              BENCH_CLIENT (http | fetch), BENCH_API (process | in-process),
//                              BENCH_ONLY=rows (the 100,000-row phase alone; each run's figures printed),
//                              BENCH_ONLY=concurrent (the 8-client phase alone)
//   BENCH_CPU_PROFILE=<dir>    writes V8 CPU profiles of this process over the API's measured concurrent phase
//                              (<dir>/sql-<engine>.cpuprofile) and one extra 100,000-row API call
//                              (<dir>/sql-rows-<engine>.cpuprofile; summarise with `npx tsx bench/cpuprofile-summary.ts`).
//                              The profiler costs CPU itself: take the CPU figures from a run without it. Needs
//                              BENCH_API=in-process (the API's code runs here only then).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EngineEndpoint } from '../domain/sql-engine';
import type { SqlEngine } from '../domain/states';
import { protocols } from '../lib/sql';
import type { SqlConnection } from '../lib/sql/types';
import { killDrivers } from '../testkit/servers';
import { median, printHeader, printJson, printStats, printTarget, round, stats } from '../testkit/stats';
import { defer, envInt, runBench } from './lifecycle';
import { pidsMentioning, rssMiB, threadTicksByName, TICKS, treeTicks } from './proc-stats';
import { startBenchStack, type BenchStack } from './stack';

const N = envInt('BENCH_N', 300);
const WARMUP = envInt('BENCH_WARMUP', 30);
const ROWS_RUNS = envInt('BENCH_ROWS_RUNS', 15);
/** The 100,000-row phase's warm-up, in rounds of the three sides: at least this many, then on until steady. */
const ROWS_WARMUP = envInt('BENCH_ROWS_WARMUP', 15);
const ROWS_WARMUP_MAX = Math.max(ROWS_WARMUP, envInt('BENCH_ROWS_WARMUP_MAX', 45));
/** Rows warm once the median round time of the last ROWS_STEADY_ROUNDS rounds is within ROWS_STEADY of the ones before. */
const ROWS_STEADY_ROUNDS = 5;
const ROWS_STEADY = 0.1;
const SECONDS = envInt('BENCH_SECONDS', 60);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 8);
const CONCURRENT_WARMUP = envInt('BENCH_CONCURRENT_WARMUP', 60);
const CONCURRENT_WARMUP_MAX = Math.max(CONCURRENT_WARMUP, envInt('BENCH_CONCURRENT_WARMUP_MAX', 300));
/** The warm-up's slices, a side: alternating, so both sides warm on the same engine. */
const WARMUP_SLICE = 10;
/** Warm once the mean rate of each side's last STEADY_SLICES slices is within STEADY of the STEADY_SLICES before. */
const STEADY_SLICES = 3;
const STEADY = 0.05;
const CONCURRENT_ROUNDS = Math.max(1, envInt('BENCH_CONCURRENT_ROUNDS', 6));
const ROWS = 100_000;
const ENGINES = (process.env.BENCH_ENGINES ?? 'SPARK_SQL,TRINO').split(',') as SqlEngine[];
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
const ROWS_ONLY = process.env.BENCH_ONLY === 'rows';
const CONCURRENT_ONLY = process.env.BENCH_ONLY === 'concurrent';
if (process.env.BENCH_ONLY && !ROWS_ONLY && !CONCURRENT_ONLY)
  throw new Error(`BENCH_ONLY='${process.env.BENCH_ONLY}': rows, concurrent or unset`);
const CLIENT = process.env.BENCH_CLIENT ?? 'http';
if (CLIENT !== 'http' && CLIENT !== 'fetch') throw new Error(`BENCH_CLIENT='${CLIENT}': http or fetch`);
const API = process.env.BENCH_API ?? 'process';
if (API !== 'process' && API !== 'in-process') throw new Error(`BENCH_API='${API}': process or in-process`);
if (PROFILE_DIR && API === 'process')
  throw new Error('BENCH_CPU_PROFILE profiles this process: set BENCH_API=in-process');

/** Runs `fn` under the V8 CPU profiler of this process when BENCH_CPU_PROFILE is set; writes <dir>/<name>.cpuprofile. */
async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (!PROFILE_DIR) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(PROFILE_DIR, { recursive: true });
    const file = path.join(PROFILE_DIR, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`  CPU profile: ${file}`);
  }
}

/** The 100,000-row statement of each engine: two columns, a number and a string. */
const BIG: Record<SqlEngine, string> = {
  SPARK_SQL: `select id, cast(id as string) as s from range(${ROWS})`,
  TRINO: `select orderkey, comment from tpch.sf1.orders limit ${ROWS}`,
};

interface Side {
  label: string;
  run(statement: string, maxRows: number): Promise<number>;
  /** API side: ms its last call spent after the answer's last byte, turning the body into a string and parsing it. */
  lastParseMs?: number;
}

/** POST `body` to `url` over `agent`; resolves the status and the whole answer, rejects a cut one. */
function post(agent: http.Agent, url: URL, body: string): Promise<{ status: number; text: string; received: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('close', () => {
          if (!res.complete) return reject(new Error('API: the answer was cut short'));
          const received = performance.now();
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), received });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `statement` through POST /sql/execute; resolves the number of rows. */
function apiSide(s: BenchStack, engine: SqlEngine): Side {
  const url = new URL(`${s.url}/sql/execute`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  defer('API client agent', () => agent.destroy());
  const call =
    CLIENT === 'fetch'
      ? async (body: string) => {
          const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          const bytes = await res.arrayBuffer();
          const received = performance.now();
          return { status: res.status, text: Buffer.from(bytes).toString('utf8'), received };
        }
      : (body: string) => post(agent, url, body);
  const side: Side = {
    label: 'API',
    async run(statement, maxRows) {
      const { status, text, received } = await call(JSON.stringify({ statement, engine, maxRows }));
      const body = JSON.parse(text) as { info?: { state: string; exception?: string }; rows?: unknown[] };
      side.lastParseMs = performance.now() - received;
      if (status !== 200 || body.info?.state !== 'FINISHED')
        throw new Error(`API: HTTP ${status} ${text.slice(0, 300)}`);
      return body.rows!.length;
    },
  };
  return side;
}

/**
 * POST `body` to `url` over `agent` asking for JSON lines; each complete line is parsed as it arrives (rows kept,
 * as the other sides keep theirs). Resolves the status, the rows, and the last line's info; rejects a cut answer.
 */
function postLines(
  agent: http.Agent,
  url: URL,
  body: string,
): Promise<{ status: number; rows: unknown[][][]; info?: { state: string; exception?: string }; text?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          accept: 'application/x-ndjson',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const rows: unknown[][][] = [];
        let info: { state: string } | undefined;
        let partial: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          const nl = c.lastIndexOf(10);
          if (nl < 0) return void partial.push(c);
          partial.push(c.subarray(0, nl));
          const text = partial.length === 1 ? partial[0].toString('utf8') : Buffer.concat(partial).toString('utf8');
          partial = [c.subarray(nl + 1)];
          for (const line of text.split('\n')) {
            const o = JSON.parse(line) as { rows?: unknown[][]; info?: { state: string } };
            if (o.rows) rows.push(o.rows);
            else if (o.info) info = o.info;
          }
        });
        res.on('close', () => {
          if (!res.complete) return reject(new Error('API: the answer was cut short'));
          const rest = Buffer.concat(partial).toString('utf8');
          resolve({ status: res.statusCode ?? 0, rows, info, ...(rest ? { text: rest } : {}) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `statement` through POST /sql/execute as JSON lines, parsed as they arrive; resolves the number of rows. */
function apiLinesSide(s: BenchStack, engine: SqlEngine): Side {
  const url = new URL(`${s.url}/sql/execute`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  defer('API lines client agent', () => agent.destroy());
  return {
    label: 'API lines',
    async run(statement, maxRows) {
      const { status, rows, info, text } = await postLines(agent, url, JSON.stringify({ statement, engine, maxRows }));
      if (status !== 200 || info?.state !== 'FINISHED')
        throw new Error(`API lines: HTTP ${status} ${info?.exception ?? text?.slice(0, 300) ?? ''}`);
      return rows.reduce((n, r) => n + r.length, 0);
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

/**
 * CPU ms of this process (both sides' clients, and the API with BENCH_API=in-process), of the API's process
 * (0 in process), of the store and Temporal servers, and of the engine's processes (0 when not found).
 */
interface Cpu {
  self: number;
  api: number;
  mongo: number;
  temporal: number;
  engine: number;
}
/** The engine's process (its process tree is counted), set once it runs. */
let enginePid: number | undefined;
function cpuNow(s: BenchStack): Cpu {
  const u = process.cpuUsage();
  // Each server is found by its port in its command line (NUL-separated arguments).
  const port = (address: string) => `\0${/:(\d+)/.exec(address.replace(/^\w+:\/\//, ''))![1]}`;
  const ms = (address: string, what: string) => (treeTicks(pidsMentioning(port(address), what)) * 1000) / TICKS;
  return {
    self: (u.user + u.system) / 1000,
    api: s.apiPid ? (treeTicks(s.apiPid) * 1000) / TICKS : 0,
    mongo: ms(s.config.MONGO_URL, 'Launcher.java'),
    temporal: ms(s.config.TEMPORAL_ADDRESS, 'temporal'),
    engine: enginePid ? (treeTicks(enginePid) * 1000) / TICKS : 0,
  };
}

/** What concurrent loops did in a window: statements, seconds (until the last one ended) and CPU ms in all. */
interface Tally {
  done: number;
  seconds: number;
  cpu: Cpu;
  /** The engine's CPU ticks by thread name (threadTicksByName). */
  engineThreads: Map<string, number>;
}
const NONE: Tally = {
  done: 0,
  seconds: 0,
  cpu: { self: 0, api: 0, mongo: 0, temporal: 0, engine: 0 },
  engineThreads: new Map(),
};
const engineThreads = () => (enginePid ? threadTicksByName(enginePid) : new Map<string, number>());
/** a + sign × b, name by name. */
function mergeTicks(a: Map<string, number>, b: Map<string, number>, sign = 1): Map<string, number> {
  const out = new Map(a);
  for (const [name, t] of b) out.set(name, (out.get(name) ?? 0) + sign * t);
  return out;
}
const plus = (a: Cpu, b: Cpu, sign = 1): Cpu => ({
  self: a.self + sign * b.self,
  api: a.api + sign * b.api,
  mongo: a.mongo + sign * b.mongo,
  temporal: a.temporal + sign * b.temporal,
  engine: a.engine + sign * b.engine,
});
const add = (a: Tally, b: Tally): Tally => ({
  done: a.done + b.done,
  seconds: a.seconds + b.seconds,
  cpu: plus(a.cpu, b.cpu),
  engineThreads: mergeTicks(a.engineThreads, b.engineThreads),
});
const rateOf = (t: Tally) => t.done / t.seconds;
const cpuPerStatement = (t: Tally): Cpu => ({
  self: round(t.cpu.self / t.done, 2),
  api: round(t.cpu.api / t.done, 2),
  mongo: round(t.cpu.mongo / t.done, 2),
  temporal: round(t.cpu.temporal / t.done, 2),
  engine: round(t.cpu.engine / t.done, 2),
});

const cpuLine = (c: Cpu) =>
  `this process ${c.self}, API process ${c.api}, MongoDB-protocol server ${c.mongo}, Temporal ${c.temporal}; the engine ${c.engine}`;

/** `sides.length` concurrent loops (one side each) starting statements for `seconds`; counted until the last ends. */
async function throughput(s: BenchStack, sides: Side[], statement: string, seconds: number): Promise<Tally> {
  const before = cpuNow(s);
  const threadsBefore = engineThreads();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let done = 0;
  await Promise.all(
    sides.map(async (side) => {
      while (performance.now() < end) {
        await side.run(statement, 1000);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return {
    done,
    seconds: elapsed,
    cpu: plus(cpuNow(s), before, -1),
    engineThreads: mergeTicks(engineThreads(), threadsBefore, -1),
  };
}

/** The engine's process, by what its command line holds; undefined (its CPU not counted) if not found. */
function enginePidOf(engine: SqlEngine, endpoint: EngineEndpoint): number | undefined {
  try {
    return engine === 'SPARK_SQL'
      ? pidsMentioning(`hive.server2.thrift.port=${endpoint.port}`, 'HiveThriftServer2')
      : pidsMentioning('io.trino.server', 'java');
  } catch {
    return undefined;
  }
}

async function benchEngine(s: BenchStack, engine: SqlEngine): Promise<Record<string, unknown>> {
  console.log(`\n## ${engine}`);
  const t0 = performance.now();
  const api = apiSide(s, engine);
  await api.run('select 1', 10); // starts the engine and waits for it
  const rec = await s.store.db.collection('sqlEngines').findOne({ type: engine, clusterId: 'default' });
  const endpoint = rec!.endpoint as EngineEndpoint;
  console.log(`  engine up in ${((performance.now() - t0) / 1000).toFixed(1)} s at ${endpoint.host}:${endpoint.port}`);
  enginePid = enginePidOf(engine, endpoint);
  const conns = await Promise.all(Array.from({ length: CONCURRENCY }, () => protocols[engine].connect(endpoint)));
  defer(`${engine} direct sessions`, () => Promise.all(conns.map((c) => c.close())));
  const direct = directSide(conns[0]);

  if (CONCURRENT_ONLY) return concurrent(s, engine, api, conns);
  const lat = ROWS_ONLY ? undefined : await latency(api, direct);
  const big = await manyRows(engine, api, direct, s, endpoint);
  if (ROWS_ONLY) return big;
  return { ...lat, ...big, ...(await concurrent(s, engine, api, conns)) };
}

/** `select 1`, sequential, API and direct alternating: the overhead. */
async function latency(api: Side, direct: Side) {
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
  return {
    apiP50: round(a.p50, 2),
    apiP99: round(a.p99, 2),
    directP50: round(d.p50, 2),
    directP99: round(d.p99, 2),
    overheadP50: round(overheadP50, 2),
    overheadP99: round(overheadP99, 2),
  };
}

/** The 100,000-row result: rows/s through the API (two shapes) and direct. */
async function manyRows(engine: SqlEngine, api: Side, direct: Side, s: BenchStack, endpoint: EngineEndpoint) {
  // CPU ms of this process, the API's and the engine's (found by its port on its command line), per side.
  // (Trino's port is in its config file, not its command line: its CPU is not counted.)
  const enginePid = engine === 'SPARK_SQL' ? pidsMentioning(`thrift.port=${endpoint.port}`, 'thriftserver') : 0;
  const cpu = () => [
    ((u) => (u.user + u.system) / 1000)(process.cpuUsage()),
    s.apiPid ? (treeTicks(s.apiPid) * 1000) / TICKS : 0,
    enginePid ? (treeTicks(enginePid) * 1000) / TICKS : 0,
  ];
  const cpuMs: Record<string, number[][]> = { API: [], 'API lines': [], direct: [] };

  // Three sides in rotating order: the API's JSON object (parsed after its last byte, as `res.json()` does), the
  // API's JSON lines (parsed as they arrive), and the direct client (rows decoded as they arrive).
  const lines = apiLinesSide(s, engine);
  const order = [direct, api, lines];
  const rotated = (i: number) => [...order.slice(i % 3), ...order.slice(0, i % 3)];
  // Warmed first, in the same rotating rounds, until a round's time stops falling: both engines' JITs take 15
  // to 20 such rounds to settle (the Thrift Server from 350 to 150-200 ms a call, Trino from 700 to 380), and
  // 9 runs from cold measured mostly the warm-up, each side's median at another point of it. A round's time
  // varies by a third from one round to the next (the engine's collector), hence medians over 5 rounds.
  const warmRounds: number[] = [];
  for (let i = 0; ; i++) {
    const steadyNow = steady(warmRounds, ROWS_STEADY_ROUNDS, ROWS_STEADY, median);
    if (i >= ROWS_WARMUP && (steadyNow || i >= ROWS_WARMUP_MAX)) {
      console.log(
        steadyNow
          ? `  warm after ${i} rounds of the three sides (the median round of the last ${ROWS_STEADY_ROUNDS} within ${100 * ROWS_STEADY} % of the ${ROWS_STEADY_ROUNDS} before): ${round(median(warmRounds.slice(-ROWS_STEADY_ROUNDS)))} ms a round`
          : `  not steady after ${i} rounds (BENCH_ROWS_WARMUP_MAX): measured all the same`,
      );
      break;
    }
    let roundMs = 0;
    for (const side of rotated(i)) roundMs += (await time(side, BIG[engine], ROWS))[0];
    warmRounds.push(roundMs);
  }
  const rowsPerS: Record<'API' | 'API lines' | 'direct', number[]> = { API: [], 'API lines': [], direct: [] };
  const parseMs: number[] = [];
  /** The JSON object's rows/s up to its last byte: what the API delivers, before the client's own parse. */
  const lastByteRowsPerS: number[] = [];
  for (let i = 0; i < ROWS_RUNS; i++) {
    for (const side of rotated(i)) {
      // One warm API run under the profiler (BENCH_CPU_PROFILE), and not counted: the profiler slows it.
      if (PROFILE_DIR && side === api && i === ROWS_RUNS - 1)
        await profiled(`sql-rows-${engine}`, () => time(side, BIG[engine], ROWS));
      const c0 = cpu();
      const [ms, rows] = await time(side, BIG[engine], ROWS);
      const c1 = cpu();
      cpuMs[side.label].push(c1.map((v, k) => v - c0[k]));
      if (rows !== ROWS) throw new Error(`${side.label}: ${rows} rows, expected ${ROWS}`);
      rowsPerS[side.label as 'API' | 'API lines' | 'direct'].push((rows / ms) * 1000);
      if (side === api) {
        parseMs.push(api.lastParseMs!);
        lastByteRowsPerS.push((rows / (ms - api.lastParseMs!)) * 1000);
      }
    }
    if (ROWS_ONLY)
      console.log(
        `  run ${i + 1}: ${Object.entries(rowsPerS)
          .map(([label, r]) => `${label} ${round((1000 * ROWS) / r.at(-1)!)} ms`)
          .join(', ')}`,
      );
  }
  const bigApi = stats(rowsPerS.API).p50;
  const bigLines = stats(rowsPerS['API lines']).p50;
  const bigDirect = stats(rowsPerS.direct).p50;
  console.log(
    `\n${ROWS} rows (${BIG[engine]}), median of ${ROWS_RUNS}: API ${round(bigApi, 0)} rows/s, ` +
      `API as JSON lines ${round(bigLines, 0)} rows/s, direct ${round(bigDirect, 0)} rows/s`,
  );
  for (const [label, runs] of Object.entries(cpuMs)) {
    // The mean: /proc counts CPU in 10 ms ticks, coarse beside one call.
    const mean = (k: number) => round(runs.reduce((sum, r) => sum + r[k], 0) / runs.length, 0);
    const engineMs = enginePid ? mean(2) : 'not counted';
    console.log(
      `  CPU ms a call, ${label.padEnd(9)}: this process ${mean(0)}, API process ${mean(1)}, engine ${engineMs}`,
    );
  }
  if (s.apiPid) console.log(`  the API process's resident memory after these calls: ${rssMiB(s.apiPid)} MiB`);
  printTarget('API (JSON object) / direct rows/s', (100 * bigApi) / bigDirect, '>', 90, '%');
  printTarget('API (JSON lines) / direct rows/s', (100 * bigLines) / bigDirect, '>', 90, '%');
  // The part no server can shorten: after the last byte, the client turns the whole body into rows (a direct
  // client has them as they come). Shown apart, so the API's own share of the gap is plain.
  const parse = stats(parseMs).p50;
  console.log(
    `  of an API call, the client's own work after the last byte (body to string, JSON.parse): ${round(parse)} ms median, ` +
      `${round((100 * parse * bigApi) / ROWS / 1000)} % of the call; up to the last byte the JSON object came at ` +
      `${round(median(lastByteRowsPerS), 0)} rows/s, ${round((100 * median(lastByteRowsPerS)) / bigDirect, 1)} % of direct`,
  );

  return {
    rowsPerSApi: round(bigApi, 0),
    rowsApiClientParseMs: round(parse),
    rowsPerSApiToLastByte: round(median(lastByteRowsPerS), 0),
    rowsPerSApiLines: round(bigLines, 0),
    rowsPerSDirect: round(bigDirect, 0),
  };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The centre (`mean` or `median`) of the last `n` values within `tolerance` of the centre of the `n` before them. */
function steady(values: number[], n = STEADY_SLICES, tolerance = STEADY, centre = mean): boolean {
  if (values.length < 2 * n) return false;
  const [before, last] = [centre(values.slice(-2 * n, -n)), centre(values.slice(-n))];
  return Math.abs(last - before) <= tolerance * before;
}

/** 8 concurrent clients a side: statements/s and the CPU a statement cost. */
async function concurrent(s: BenchStack, engine: SqlEngine, api: Side, conns: SqlConnection[]) {
  // Both paths warmed at this concurrency first, in alternating slices, until the rates stop climbing: the
  // JITs take minutes at an engine's rate. The Thrift Server went from 40 to 180 statements/s over the first
  // 100 s a side (its C2 compiler still busy), and a phase measured while it climbs measures the climb: whichever
  // side ran later in a round had the warmer engine. The MongoDB-protocol server compiles the API's audit and
  // history writes too (a deployed MongoDB has no JIT to warm). With a whole warm-up a side, the side warmed first
  // sat idle for its length, then was measured first on the least warm engine.
  const apiCallers = Array.from({ length: CONCURRENCY }, () => api);
  const directCallers = conns.map(directSide);
  const slice = Math.min(WARMUP_SLICE, CONCURRENT_WARMUP_MAX);
  const warm = { api: [] as number[], direct: [] as number[] };
  for (let warmed = 0; ; warmed += slice) {
    const steadyNow = steady(warm.api) && steady(warm.direct);
    if (warmed >= CONCURRENT_WARMUP && (steadyNow || warmed >= CONCURRENT_WARMUP_MAX)) {
      console.log(
        steadyNow
          ? `  steady after ${warmed} s a side (the last ${STEADY_SLICES} slices of each within ${100 * STEADY} % of the ${STEADY_SLICES} before)`
          : `  not steady after ${warmed} s a side (BENCH_CONCURRENT_WARMUP_MAX): measured all the same`,
      );
      break;
    }
    const [a, d] = [
      await throughput(s, apiCallers, 'select 1', slice),
      await throughput(s, directCallers, 'select 1', slice),
    ];
    warm.api.push(rateOf(a));
    warm.direct.push(rateOf(d));
    console.log(`  warm-up: API ${round(rateOf(a))}, direct ${round(rateOf(d))} statements/s`);
  }
  // Measured in rounds, API then direct, then direct then API, and so on: the machine's load drifts (other
  // processes), and alternating gives both sides the same share of each part of the window.
  let apiT = NONE;
  let directT = NONE;
  const roundRatios: number[] = [];
  const chunk = SECONDS / CONCURRENT_ROUNDS;
  for (let r = 0; r < CONCURRENT_ROUNDS; r++) {
    const pair: Partial<Record<'API' | 'direct', Tally>> = {};
    for (const side of r % 2 ? (['direct', 'API'] as const) : (['API', 'direct'] as const)) {
      let t: Tally;
      if (side === 'direct') directT = add(directT, (t = await throughput(s, directCallers, 'select 1', chunk)));
      else if (r > 0) apiT = add(apiT, (t = await throughput(s, apiCallers, 'select 1', chunk)));
      else apiT = add(apiT, (t = await profiled(`sql-${engine}`, () => throughput(s, apiCallers, 'select 1', chunk))));
      pair[side] = t;
      console.log(
        `  round ${r + 1}, ${side.padEnd(6)}: ${round(rateOf(t))} statements/s, CPU ms a statement ${cpuLine(cpuPerStatement(t))}`,
      );
    }
    roundRatios.push((100 * rateOf(pair.API!)) / rateOf(pair.direct!));
  }
  const [apiRate, apiCpu] = [rateOf(apiT), cpuPerStatement(apiT)];
  const [directRate, directCpu] = [rateOf(directT), cpuPerStatement(directT)];
  console.log(
    `\n${CONCURRENCY} concurrent clients, ${SECONDS} s a side in ${CONCURRENT_ROUNDS} alternating rounds: API ${round(apiRate)} statements/s, direct ${round(directRate)} statements/s`,
  );
  // Where the API's share goes: on two cores every CPU ms of it is taken from the engine.
  for (const [label, c] of [
    ['API', apiCpu],
    ['direct', directCpu],
  ] as const)
    console.log(`  CPU ms a statement, ${label.padEnd(6)}: ${cpuLine(c)}`);
  printEngineThreads(apiT, directT);
  console.log(
    `  API / direct by round: ${roundRatios.map((x) => `${round(x, 1)} %`).join(', ')}; median ${round(median(roundRatios), 1)} %, ` +
      `from ${round(Math.min(...roundRatios), 1)} to ${round(Math.max(...roundRatios), 1)} %`,
  );
  printTarget('API / direct statements/s', (100 * apiRate) / directRate, '>', 90, '%');
  return {
    concurrentApi: round(apiRate, 1),
    concurrentDirect: round(directRate, 1),
    concurrentRoundRatios: roundRatios.map((x) => round(x, 1)),
    concurrentApiCpuMs: round(apiCpu.self + apiCpu.api + apiCpu.mongo + apiCpu.temporal, 2),
    concurrentDirectCpuMs: round(directCpu.self + directCpu.api + directCpu.mongo + directCpu.temporal, 2),
    concurrentApiCpu: apiCpu,
    concurrentDirectCpu: directCpu,
  };
}

/** The engine's CPU a statement by thread name on each side, the largest differences first. */
function printEngineThreads(api: Tally, direct: Tally) {
  if (!enginePid) return;
  const per = (t: Tally, name: string) => ((t.engineThreads.get(name) ?? 0) * 1000) / TICKS / t.done;
  const names = [...new Set([...api.engineThreads.keys(), ...direct.engineThreads.keys()])]
    .map((name) => ({ name, a: per(api, name), d: per(direct, name) }))
    .filter((x) => x.a || x.d)
    .sort((x, y) => Math.abs(y.a - y.d) - Math.abs(x.a - x.d) || y.a - x.a);
  console.log("  the engine's CPU ms a statement by thread (API side, direct side), largest differences first:");
  for (const { name, a, d } of names.slice(0, 12)) console.log(`    ${name.padEnd(16)} ${round(a, 3)}  ${round(d, 3)}`);
}

runBench('sql', 2400, async () => {
  printHeader(
    `bench:sql — POST /sql/execute against the same statement sent directly to the same engine (API: ${API}, its client: ${CLIENT})`,
  );
  const s = await startBenchStack({ api: API });
  defer('engines', async () => {
    // Stopped through their workflows first: a killed engine would be restarted while the worker runs.
    for (const type of ENGINES) {
      const id = type === 'TRINO' ? 'trino-default' : 'sparksql-default';
      await fetch(`${s.url}/sql/engine/${id}`, { method: 'DELETE' }).catch(() => undefined);
    }
    const n = await killDrivers(s.config.DRIVER_DIR);
    if (n) console.log(`  killed ${n} leftover engine process group(s)`);
  });
  const figures: Record<string, unknown> = { api: API, client: CLIENT };
  for (const engine of ENGINES) {
    if (engine === 'TRINO' && !existsSync(path.join(s.config.TRINO_HOME, 'bin', 'launcher'))) {
      console.log('\n## TRINO: not installed (scripts/setup.sh without SKIP_TRINO=1); skipped');
      continue;
    }
    figures[engine] = await benchEngine(s, engine);
  }
  printJson('sql', figures);
});
