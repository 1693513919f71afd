// Spark Connect through the gateway against the floor: the same pyspark client (testkit/connect_client.py)
// connected straight to the same server (h2c on loopback, with the server's secret the gateway would add), in one
// run, on the local cluster:
//   - spark.range(1).collect(), sequential, gateway and direct in alternating batches: overhead = gateway − direct
//   - 8 concurrent clients (one process and session each) for a fixed time: calls/s through the gateway vs direct
//   - a large collect (BENCH_COLLECT_MB of Arrow batches, to a pyarrow Table, no pandas): MB/s gateway vs direct
// Targets: overhead p50 < 1 ms and p99 < 5 ms; throughput ≥ 90 % of direct; the collect ≥ 90 % of direct.
// The gateway side carries TLS (pyspark turns it on with a token); the direct side is plaintext, as the server is.
// A third side splits the difference (bench/tls-floor-proxy.mjs): the same client through the least a TLS-terminating
// proxy does, a byte pipe. "floor / direct" is what TLS and a proxy hop cost on this machine whatever the proxy's
// code; "gateway / floor" is what the gateway's own checks, routing and relay cost.
//
//   npm run bench:connect      BENCH_N (400), BENCH_BATCH (20), BENCH_SECONDS (10), BENCH_CONCURRENCY (8),
//                              BENCH_COLLECT_MB (1024), BENCH_COLLECT_RUNS (3), BENCH_ONLY=collect (the collect alone)
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CONNECT_SECRET_HEADER, connectServerSecret } from '../lib/driver-secret';
import { startConnectGatewayThread } from '../api/connect/gateway-thread';
import { ConnectClient } from '../testkit/connect-client';
import { killDrivers } from '../testkit/servers';
import { printHeader, printJson, printStats, printTarget, round, stats } from '../testkit/stats';
import { defer, envInt, runBench } from './lifecycle';
import { startBenchStack } from './stack';

const N = envInt('BENCH_N', 400);
const BATCH = envInt('BENCH_BATCH', 20);
const SECONDS = envInt('BENCH_SECONDS', 10);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 8);
const COLLECT_MB = envInt('BENCH_COLLECT_MB', 1024);
const COLLECT_RUNS = envInt('BENCH_COLLECT_RUNS', 3);
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const ADMIN_KEY = 'bench-connect-admin-key-0123456789abcdef';

const LATENCIES = (n: number, call = 'spark.range(1).collect()') => `
import time
lat = []
for _ in range(${n}):
    t = time.perf_counter()
    ${call}
    lat.append((time.perf_counter() - t) * 1000)
result = lat`;
/** One Config RPC and nothing for Spark to run: the proxy's own share shows best here. */
const PLAIN = 'spark.conf.get("spark.sql.shuffle.partitions")';

const LOOP = (seconds: number) => `
import time
end = time.perf_counter() + ${seconds}
n = 0
while time.perf_counter() < end:
    spark.range(1).collect()
    n += 1
result = n`;

// 8 bigint columns: 64 bytes a row in Arrow; 64 partitions keep each task's result small.
const COLLECT = (mb: number) => `
import time
rows = ${Math.round((mb * 2 ** 20) / 64)}
df = spark.range(0, rows, 1, 64).selectExpr(*[f"id + {i} as c{i}" for i in range(8)])
t = time.perf_counter()
table, _ = spark.client.to_table(df._plan.to_proto(spark.client))
s = time.perf_counter() - t
result = [table.nbytes / 2**20 / s, table.num_rows]`;

runBench('connect', 1800, async () => {
  printHeader('bench:connect — pyspark through the Spark Connect gateway against the same server directly');
  const s = await startBenchStack({
    // Every client process opens sessions of one key; a replaced session lingers 30 s (its client's grace).
    env: {
      AUTH_MODE: 'on',
      AUTH_ADMIN_KEY: ADMIN_KEY,
      CONNECT_START_TIMEOUT_MS: '180000',
      CONNECT_SESSIONS_PER_PRINCIPAL: '64',
    },
  });
  const admin = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
  // A large collect goes through the server's driver: room for it (Spark's default maxResultSize is 1g).
  const clusters = (await (await fetch(`${s.url}/cluster?size=100`, { headers: admin })).json()) as {
    content: { id: string; name: string }[];
  };
  const dflt = clusters.content.find((c) => c.name === 'default')!;
  const put = await fetch(`${s.url}/cluster/${dflt.id}`, {
    method: 'PUT',
    headers: admin,
    body: JSON.stringify({
      defaultApplicationConfig: 'spark.driver.maxResultSize=4g',
      memorySettings: { driverMemory: '3g', dynamicAllocation: 'false' },
    }),
  });
  if (put.status !== 200) throw new Error(`PUT /cluster: ${put.status} ${await put.text()}`);
  const keyRes = await fetch(`${s.url}/auth/keys`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: 'bench', role: 'operator' }),
  });
  const { key } = (await keyRes.json()) as { key: string };
  // On its own thread, as api/main.ts runs it.
  const gw = await startConnectGatewayThread(s.config, { port: 0 });
  defer('gateway', () => gw.close());
  defer('connect server', async () => {
    await fetch(`${s.url}/connect/server/connect-${dflt.id}`, { method: 'DELETE', headers: admin }).catch(
      () => undefined,
    );
    const n = await killDrivers(s.config.DRIVER_DIR);
    if (n) console.log(`  killed ${n} leftover driver process group(s)`);
  });
  const logFile = path.join(s.dir, 'connect-clients.log');
  const newClient = () => {
    const c = new ConnectClient({ python: s.config.PYTHON, caFile: s.config.CONNECT_TLS_CERT, logFile });
    defer('client', () => c.close());
    return c;
  };
  const must = async <T>(c: ConnectClient, code: string) => c.value<T>(code);

  // The server starts with the first session through the gateway; the direct side then uses the same one.
  const viaGw = newClient();
  const t0 = Date.now();
  const opened = await viaGw.connect(`${gw.url}/;token=${key}`);
  if (!opened.ok) throw new Error(`connect: ${opened.message}`);
  await must(viaGw, 'spark.range(1).collect()');
  console.log(`server started and first call answered in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const server = (await s.store.col('connectServers').findOne({ _id: `connect-${dflt.id}` } as never)) as unknown as {
    endpoint: { host: string; port: number };
    driverId: string;
  };
  const directUrl = `sc://${server.endpoint.host}:${server.endpoint.port}/;${CONNECT_SECRET_HEADER}=${connectServerSecret(s.config.SECRET_KEY, server.driverId)}`;
  const direct = newClient();
  const d = await direct.connect(directUrl);
  if (!d.ok) throw new Error(`direct connect: ${d.message}`);

  // The floor: a bare TLS proxy in a process of its own, in front of the same server.
  const floorProc = spawn(
    process.execPath,
    ['--max-semi-space-size=1', path.join(import.meta.dirname, 'tls-floor-proxy.mjs')],
    {
      env: {
        UPSTREAM: `${server.endpoint.host}:${server.endpoint.port}`,
        CERT: s.config.CONNECT_TLS_CERT,
        KEY: s.config.CONNECT_TLS_KEY,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  defer('TLS floor proxy', () => void floorProc.kill());
  const [line] = (await once(createInterface({ input: floorProc.stdout }), 'line')) as [string];
  // pyspark turns TLS on with a token; the pipe reads nothing, so the client sends the server's secret itself.
  const floorUrl = `sc://127.0.0.1:${(JSON.parse(line) as { port: number }).port}/;token=floor;${CONNECT_SECRET_HEADER}=${connectServerSecret(s.config.SECRET_KEY, server.driverId)}`;
  const floor = newClient();
  const f = await floor.connect(floorUrl);
  if (!f.ok) throw new Error(`floor connect: ${f.message}`);

  const sides = { gateway: viaGw, direct, floor };
  const collectOnly = process.env.BENCH_ONLY === 'collect';
  const latency = collectOnly ? undefined : await latencyAndRate();
  async function latencyAndRate() {
    // Warm every path, then alternate batches so drift (JIT, caches, other load) hits them alike.
    const sequential = async (call?: string) => {
      const out = { gateway: [] as number[], direct: [] as number[], floor: [] as number[] };
      for (const c of Object.values(sides)) await must(c, LATENCIES(30, call));
      for (let i = 0; i < N / BATCH; i++)
        for (const [side, c] of Object.entries(sides))
          out[side as keyof typeof sides].push(...(await must<number[]>(c, LATENCIES(BATCH, call))));
      return out;
    };
    const lat = await sequential();
    printStats(`spark.range(1).collect(), ${N} sequential calls each`, [
      ['gateway', lat.gateway],
      ['direct', lat.direct],
      ['TLS floor', lat.floor],
    ]);
    const [g, dr, fl] = [stats(lat.gateway), stats(lat.direct), stats(lat.floor)];
    const overheadP50 = g.p50 - dr.p50;
    const overheadP99 = g.p99 - dr.p99;
    printTarget('overhead p50', overheadP50, '<', 1, 'ms');
    printTarget('overhead p99', overheadP99, '<', 5, 'ms');
    console.log(
      `  of which the TLS floor p50 ${round(fl.p50 - dr.p50, 2)} ms, p99 ${round(fl.p99 - dr.p99, 2)} ms; gateway over the floor p50 ${round(g.p50 - fl.p50, 2)} ms, p99 ${round(g.p99 - fl.p99, 2)} ms`,
    );
    const plain = await sequential(PLAIN);
    printStats(`spark.conf.get (one Config RPC), ${N} sequential calls each`, [
      ['gateway', plain.gateway],
      ['direct', plain.direct],
      ['TLS floor', plain.floor],
    ]);
    const [pg, pd, pf] = [stats(plain.gateway), stats(plain.direct), stats(plain.floor)];
    console.log(
      `  overhead p50 ${round(pg.p50 - pd.p50, 2)} ms, p99 ${round(pg.p99 - pd.p99, 2)} ms; the TLS floor's p50 ${round(pf.p50 - pd.p50, 2)} ms, p99 ${round(pf.p99 - pd.p99, 2)} ms`,
    );

    // Concurrent clients: CONCURRENCY processes, each its own session, first through the gateway, then direct.
    const many = [viaGw, ...Array.from({ length: CONCURRENCY - 1 }, newClient)];
    const rate = async (url: string) => {
      await Promise.all(many.map((c) => c.connect(url)));
      await Promise.all(many.map((c) => must(c, 'spark.range(1).collect()')));
      const counts = await Promise.all(many.map((c) => must<number>(c, LOOP(SECONDS))));
      return counts.reduce((a, b) => a + b, 0) / SECONDS;
    };
    const gwRate = await rate(`${gw.url}/;token=${key}`);
    const directRate = await rate(directUrl);
    const floorRate = await rate(floorUrl);
    console.log(`\n${CONCURRENCY} concurrent clients, ${SECONDS} s each side`);
    console.log(
      `  gateway ${round(gwRate, 1)} calls/s, direct ${round(directRate, 1)} calls/s, TLS floor ${round(floorRate, 1)} calls/s`,
    );
    printTarget('gateway / direct calls/s', (100 * gwRate) / directRate, '>', 90, '%');
    console.log(
      `  floor / direct ${round((100 * floorRate) / directRate, 1)} %, gateway / floor ${round((100 * gwRate) / floorRate, 1)} %`,
    );
    await Promise.all(many.slice(1).map((c) => c.close()));
    return { g, dr, fl, pg, pd, pf, gwRate, directRate, floorRate, overheadP50, overheadP99 };
  }

  // The large collect, alternating sides.
  await viaGw.connect(`${gw.url}/;token=${key}`);
  const mbps = { gateway: [] as number[], direct: [] as number[], floor: [] as number[] };
  // CPU per MB through each proxy, a figure the machine's load skews less: this process (the gateway's thread beside
  // an idle API) and the floor's process.
  const cpuMs = { gateway: 0, floor: 0 };
  const floorCpuMs = () => {
    const f = readFileSync(`/proc/${floorProc.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
  };
  // One collect first: the server's JIT warms up over the first gigabytes, whichever side runs them.
  await must(direct, COLLECT(COLLECT_MB));
  const order = ['gateway', 'direct', 'floor'] as const;
  for (let i = 0; i < COLLECT_RUNS; i++)
    for (let k = 0; k < order.length; k++) {
      // Each round starts with another side, so drift within a round hits them alike.
      const side = order[(i + k) % order.length];
      const cpu = process.cpuUsage();
      const floor0 = floorCpuMs();
      mbps[side].push((await must<[number, number]>(sides[side], COLLECT(COLLECT_MB)))[0]);
      const used = process.cpuUsage(cpu);
      if (side === 'gateway') cpuMs.gateway += (used.user + used.system) / 1000;
      if (side === 'floor') cpuMs.floor += floorCpuMs() - floor0;
    }
  const [cg, cd, cf] = [stats(mbps.gateway).p50, stats(mbps.direct).p50, stats(mbps.floor).p50];
  console.log(`\ncollect of ${COLLECT_MB} MB (Arrow), ${COLLECT_RUNS} runs each, median`);
  console.log(`  gateway ${round(cg, 1)} MB/s, direct ${round(cd, 1)} MB/s, TLS floor ${round(cf, 1)} MB/s`);
  for (const side of order) console.log(`    ${side} runs: ${mbps[side].map((v) => round(v, 1)).join(', ')} MB/s`);
  printTarget('gateway / direct collect MB/s', (100 * cg) / cd, '>', 90, '%');
  console.log(`  floor / direct ${round((100 * cf) / cd, 1)} %, gateway / floor ${round((100 * cg) / cf, 1)} %`);
  const cpuPerMb = cpuMs.gateway / (COLLECT_RUNS * COLLECT_MB);
  const floorCpuPerMb = cpuMs.floor / (COLLECT_RUNS * COLLECT_MB);
  console.log(
    `  CPU per MB: gateway (this process) ${round(cpuPerMb, 2)} ms, TLS floor (its process) ${round(floorCpuPerMb, 2)} ms`,
  );
  if (!latency) return;
  const { g, dr, fl, pg, pd, gwRate, directRate, floorRate, overheadP50, overheadP99 } = latency;

  printJson('connect', {
    gatewayP50: round(g.p50, 2),
    gatewayP99: round(g.p99, 2),
    directP50: round(dr.p50, 2),
    directP99: round(dr.p99, 2),
    overheadP50: round(overheadP50, 2),
    overheadP99: round(overheadP99, 2),
    floorOverheadP50: round(fl.p50 - dr.p50, 2),
    floorOverheadP99: round(fl.p99 - dr.p99, 2),
    plainOverheadP50: round(pg.p50 - pd.p50, 2),
    plainOverheadP99: round(pg.p99 - pd.p99, 2),
    concurrentGateway: round(gwRate, 1),
    concurrentDirect: round(directRate, 1),
    concurrentFloor: round(floorRate, 1),
    collectMB: COLLECT_MB,
    collectGatewayMBps: round(cg, 1),
    collectDirectMBps: round(cd, 1),
    collectFloorMBps: round(cf, 1),
    gatewayCpuMsPerMB: round(cpuPerMb, 2),
    floorCpuMsPerMB: round(floorCpuPerMb, 2),
  });
});
