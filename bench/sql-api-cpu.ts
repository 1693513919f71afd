// The CPU the API spends on one SQL statement, without an engine: POST /sql/execute against a stand-in Trino
// coordinator that answers `select 1` at once (one page, FINISHED), so what is measured is the API's own path
// (HTTP, middleware, audit record, query history, the protocol client) and the MongoDB-protocol server's part.
// The engine's own cost is what bench:sql measures beside it; this is the number to drive down.
//
//   npx tsx bench/sql-api-cpu.ts   BENCH_SECONDS (10 a phase), BENCH_ROUNDS (3), BENCH_CONCURRENCY (8), BENCH_WARMUP (5 s a side, unpaced),
//                                  BENCH_RATE (40 statements/s in all, about a real engine's rate on this
//                                  machine; 0: as fast as they go), AUDIT_MAX_PER_MINUTE (1,000,000: every
//                                  statement audited, as at a real engine's rate),
//                                  BENCH_CLIENT (http: node:http with a keep-alive Agent | fetch: undici),
//                                  BENCH_CPU_PROFILE=<dir> (a V8 CPU profile of the measured API phase)
//
// After a warm-up of each, rounds of two phases: the API (8 clients), then the same stand-in called directly
// through lib/sql's Trino client (8 sessions). Printed per round and as medians of rounds: statements/s, and
// CPU ms a statement of this process (the API, its clients and the stand-in), of the MongoDB-protocol server
// and of Temporal. The stand-in's own cost is in both phases; the difference between the two is the API's
// (with its HTTP client's).
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sqlEngineId, SqlEngineState } from '../domain/sql-engine';
import { protocols } from '../lib/sql';
import { Collections } from '../lib/mongo';
import { median, printHeader, printJson, round } from '../testkit/stats';
import { defer, envInt, runBench } from './lifecycle';
import { pidsMentioning, TICKS, treeTicks } from './proc-stats';
import { startBenchStack, type BenchStack } from './stack';

const SECONDS = envInt('BENCH_SECONDS', 10);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 8);
const WARMUP = envInt('BENCH_WARMUP', 5);
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const RATE = envInt('BENCH_RATE', 40);
const CLIENT = process.env.BENCH_CLIENT ?? 'http';
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE;

/** A Trino coordinator that knows one answer: `select 1`, FINISHED in the first page. */
function standInTrino(): Promise<http.Server> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/info') {
        res.setHeader('content-type', 'application/json');
        return res.end('{"starting":false}');
      }
      const id = `q${++n}`;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id,
          columns: [{ name: '_col0', type: 'integer', typeSignature: { rawType: 'integer', arguments: [] } }],
          data: [[1]],
          stats: { state: 'FINISHED', completedSplits: 1, totalSplits: 1, processedRows: 0, processedBytes: 0 },
        }),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

type Run = () => Promise<void>;

function apiRun(s: BenchStack): Run {
  const url = new URL(`${s.url}/sql/execute`);
  const body = JSON.stringify({ statement: 'select 1', engine: 'TRINO', maxRows: 1000 });
  const check = (status: number, text: string) => {
    const b = JSON.parse(text) as { info?: { state: string }; rows?: unknown[] };
    if (status !== 200 || b.info?.state !== 'FINISHED' || b.rows?.length !== 1)
      throw new Error(`API: HTTP ${status} ${text.slice(0, 300)}`);
  };
  if (CLIENT === 'fetch')
    return async () => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      check(res.status, await res.text());
    };
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  defer('API client agent', () => agent.destroy());
  return () =>
    new Promise<void>((resolve, reject) => {
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
          res.on('end', () => {
            try {
              check(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'));
              resolve();
            } catch (e) {
              reject(e);
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

type Cpu = {
  self: number;
  mongo: number;
  temporal: number;
};
function cpuNow(s: BenchStack): Cpu {
  const u = process.cpuUsage();
  const port = (address: string) => `\0${/:(\d+)/.exec(address.replace(/^\w+:\/\//, ''))![1]}`;
  const ms = (address: string, what: string) => (treeTicks(pidsMentioning(port(address), what)) * 1000) / TICKS;
  return {
    self: (u.user + u.system) / 1000,
    mongo: ms(s.config.MONGO_URL, 'Launcher.java'),
    temporal: ms(s.config.TEMPORAL_ADDRESS, 'temporal'),
  };
}

async function phase(s: BenchStack, runs: Run[], seconds: number, rate = RATE): Promise<{ rate: number; cpu: Cpu }> {
  const before = cpuNow(s);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  // Paced: caller i starts its k-th statement no sooner than t0 + (k·n + i) / RATE.
  const gap = rate ? (1000 * runs.length) / rate : 0;
  let done = 0;
  await Promise.all(
    runs.map(async (run, i) => {
      for (let k = 0; performance.now() < end; k++) {
        const at = t0 + k * gap + (i * gap) / runs.length;
        const wait = at - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (performance.now() >= end) break;
        await run();
        done++;
      }
    }),
  );
  const after = cpuNow(s);
  const per = (k: keyof Cpu) => round((after[k] - before[k]) / done, 3);
  return { rate: done / seconds, cpu: { self: per('self'), mongo: per('mongo'), temporal: per('temporal') } };
}

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

runBench('sql-api-cpu', 600, async () => {
  printHeader(
    `bench sql-api-cpu — the API's CPU per statement against a stand-in Trino (client: ${CLIENT}, ${RATE || 'unpaced'} statements/s)`,
  );
  const trino = await standInTrino();
  defer('stand-in Trino', () => new Promise((r) => trino.close(r)));
  const endpoint = { host: '127.0.0.1', port: (trino.address() as AddressInfo).port };
  const s = await startBenchStack({
    env: { AUDIT_MAX_PER_MINUTE: process.env.AUDIT_MAX_PER_MINUTE ?? '1000000' },
  });
  // The default cluster's TRINO engine, RUNNING at the stand-in: the API reads it as it reads a real one.
  const now = Date.now();
  const cluster = await s.store.col(Collections.clusters).findOne({ name: 'default' });
  const id = sqlEngineId('default', 'TRINO');
  await s.store.col(Collections.sqlEngines).insertOne({
    _id: id,
    id,
    clusterId: 'default',
    clusterName: (cluster?.name as string | undefined) ?? 'default',
    type: 'TRINO',
    state: SqlEngineState.RUNNING,
    endpoint,
    generation: 1,
    startTime: now,
    createdTime: now,
  } as never);

  const api = apiRun(s);
  const conns = await Promise.all(Array.from({ length: CONCURRENCY }, () => protocols.TRINO.connect(endpoint)));
  defer('direct sessions', () => Promise.all(conns.map((c) => c.close())));
  const direct: Run[] = conns.map((c) => async () => {
    const o = await c.run('select 1', { maxRows: 1000, timeoutMs: 60_000 });
    if (o.info.state !== 'FINISHED') throw new Error(`direct: ${o.info.state}`);
  });
  const apis = Array.from({ length: CONCURRENCY }, () => api);

  // Warm-ups unpaced, so that both JITs (this process's and the MongoDB-protocol server's) have compiled the
  // paths before anything is measured: at 40/s that takes minutes.
  await phase(s, apis, WARMUP, 0);
  await phase(s, direct, WARMUP, 0);
  // Rounds of one API phase then one direct phase: the machine's load drifts, the medians of rounds less.
  const rounds: { api: Cpu & { rate: number }; direct: Cpu & { rate: number } }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const a = await (i === 0 ? profiled('sql-api-cpu', () => phase(s, apis, SECONDS)) : phase(s, apis, SECONDS));
    const d = await phase(s, direct, SECONDS);
    rounds.push({ api: { ...a.cpu, rate: a.rate }, direct: { ...d.cpu, rate: d.rate } });
    console.log(
      `  round ${i + 1}: API ${round(a.rate, 0)}/s: ${a.cpu.self} + ${a.cpu.mongo} + ${a.cpu.temporal} ms; direct ${round(d.rate, 0)}/s: ${d.cpu.self} + ${d.cpu.mongo} + ${d.cpu.temporal} ms (this process + MongoDB-protocol server + Temporal)`,
    );
  }
  const m = (side: 'api' | 'direct', k: keyof Cpu | 'rate') => round(median(rounds.map((r) => r[side][k])), 3);
  for (const side of ['api', 'direct'] as const)
    console.log(
      `${(side === 'api' ? 'API' : 'direct').padEnd(6)} ${CONCURRENCY} clients, median of ${ROUNDS}: ${round(m(side, 'rate'), 0)} statements/s; CPU ms a statement: this process ${m(side, 'self')}, MongoDB-protocol server ${m(side, 'mongo')}, Temporal ${m(side, 'temporal')}`,
    );
  const diff = round(median(rounds.map((r) => r.api.self - r.direct.self)), 3);
  console.log(`API − direct, this process, median of rounds: ${diff} ms a statement`);
  printJson('sql-api-cpu', {
    client: CLIENT,
    rate: RATE,
    rounds,
    apiMinusDirectSelf: diff,
    apiMongo: m('api', 'mongo'),
  });
});
