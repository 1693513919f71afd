// Idle cost against the stack's past work: the whole stack (Temporal, the MongoDB-protocol server, the API and
// the worker, each its own process, data in files as in `npm start`) is measured idle after 0, then 10,000,
// then 100,000 past writes of job records (whole-document replaces, as the projection writes them: each is a
// change event for the API's feeds and an oplog entry). Prints each process's CPU while idle (% of one core,
// over BENCH_IDLE_S seconds, its descendants included), the data files' sizes, and a Socket.IO subscriber's
// latency from a write to its event.
//
//   npm run bench:idle        BENCH_IDLE_S (20), BENCH_WRITES (10000,100000)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Document } from 'mongodb';
import { io as ioClient } from 'socket.io-client';
import { loadConfig } from '../lib/config';
import { Collections, connectStore } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { stopProc } from '../scripts/services';
import { spawnService, waitForHealth, waitForPoller } from '../testkit/processes';
import { freePort, startServers } from '../testkit/servers';
import { printHeader, printJson, printStats, printTarget, round } from '../testkit/stats';
import { sleep } from '../testkit/wait';
import { defer, envInt, runBench } from './lifecycle';
import { pastJob, writePastJobs } from './past-writes';
import { pidsMentioning, sizeMb, TICKS, treeTicks } from './proc-stats';

const IDLE_S = envInt('BENCH_IDLE_S', 20);
const WRITES = (process.env.BENCH_WRITES ?? '10000,100000').split(',').map(Number);
runBench('idle', 1800, async () => {
  printHeader('bench:idle — idle CPU and data files after 0, 10,000 and 100,000 past writes');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-idle-'));
  defer('temp folder', () => rmSync(dir, { recursive: true, force: true }));
  const servers = await startServers({ dir, persistent: true });
  defer('servers', () => servers.stop(), 30_000);
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    MONGO_URL: servers.mongoUrl,
    MONGO_DB: 'idle',
    TASK_QUEUE: 'idle',
    STACK_DIR: path.join(dir, 'stack'),
    ARTIFACT_DIR: path.join(dir, 'artifacts'),
    DRIVER_DIR: path.join(dir, 'drivers'),
    API_PORT: String(await freePort()),
    LIVY_PORT: String(await freePort()),
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
  };
  const config = loadConfig(env);
  const temporal = await connectTemporal(config);
  defer('temporal client', () => temporal.connection.close());
  const worker = spawnService('worker', 'tsx', env, path.join(dir, 'logs', 'worker.log'));
  defer('worker', () => stopProc(worker));
  const api = spawnService('api', 'tsx', env, path.join(dir, 'logs', 'api.log'));
  defer('api', () => stopProc(api));
  const url = `http://127.0.0.1:${env.API_PORT}/api/v1`;
  await Promise.all([
    waitForPoller(temporal, config, worker, 180_000, path.join(dir, 'logs', 'worker.log')),
    waitForHealth(url, api, 180_000, path.join(dir, 'logs', 'api.log')),
  ]);
  const procs: Record<string, number> = {
    temporal: pidsMentioning(dir, 'temporal'),
    mongo: pidsMentioning(dir, 'Launcher.java'),
    api: api.pid!,
    worker: worker.pid!,
  };
  // What waking up costs on this machine, beside the stack: a bare Node process whose only work is a timer
  // every 100 ms (10 wake-ups a second, as many as one idle MongoDB client's pool check). Not in the total.
  const floor = spawn(process.execPath, ['-e', 'setInterval(() => {}, 100)'], { stdio: 'ignore' });
  defer('floor process', () => void floor.kill('SIGKILL'));
  const store = await connectStore(config);
  defer('store', () => store.close());
  const jobs = store.col(Collections.jobs);

  // A subscriber, as the console is: the stream's latency is measured per phase.
  const socket = ioClient(`http://127.0.0.1:${env.API_PORT}/jobs`, { transports: ['websocket'] });
  defer('socket', () => socket.close());
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  const arrivals = new Map<string, number>();
  socket.on('job', (j: { jobId: string }) => arrivals.set(j.jobId, performance.now()));

  const files = () => ({
    mongoMb: sizeMb(path.join(dir, 'data', 'mongo.mv')),
    temporalMb: sizeMb(path.join(dir, 'data', 'temporal.db')) + sizeMb(path.join(dir, 'data', 'temporal.db-wal')),
  });

  let written = 0;
  async function writePast(total: number) {
    await writePastJobs(jobs, 'idle', written, total);
    written = Math.max(written, total);
  }

  async function measure(label: string, settleMs = 25_000) {
    // Let the writes' aftermath settle: the data file's one compaction once the store is quiet runs within
    // 25 s (a check every 10 s, a compaction of at most 10 s), and is a cost of the load, not of idling.
    await sleep(settleMs);
    const before = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, treeTicks(pid)]));
    const floorBefore = treeTicks(floor.pid!);
    const t0 = performance.now();
    await sleep(IDLE_S * 1000);
    const secs = (performance.now() - t0) / 1000;
    const floorCpu = round(((treeTicks(floor.pid!) - floorBefore) / TICKS / secs) * 100, 1);
    const cpu = Object.fromEntries(
      Object.entries(procs).map(([k, pid]) => [k, round(((treeTicks(pid) - before[k]) / TICKS / secs) * 100, 1)]),
    );
    const total = round(
      Object.values(cpu).reduce((a, b) => a + b, 0),
      1,
    );
    // Stream latency: a write, then its event at the subscriber.
    const lat: number[] = [];
    for (let i = 0; i < 40; i++) {
      const id = `probe-${label}-${i}`;
      const t = performance.now();
      await jobs.replaceOne(
        { _id: id } as Document,
        { ...pastJob('idle', 0, 'SUBMITTED'), jobId: id },
        { upsert: true },
      );
      for (let w = 0; w < 400 && !arrivals.has(id); w++) await sleep(1);
      if (arrivals.has(id)) lat.push(arrivals.get(id)! - t);
      await sleep(50 + Math.random() * 100);
    }
    const f = files();
    console.log(
      `\n${label}: idle CPU % of one core — ${Object.entries(cpu)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; whole stack ${total}`,
    );
    console.log(
      `  this machine's cost of waking up: a bare Node process with one 100 ms timer used ${floorCpu} % of a core`,
    );
    console.log(`  data files: mongo.mv ${f.mongoMb} MB, temporal.db ${f.temporalMb} MB`);
    printStats(`  write → Socket.IO event (ms), ${lat.length}/40 arrived`, [['latency', lat]]);
    return { label, cpu, total, floorCpu, ...f, streamP50: lat.sort((a, b) => a - b)[Math.floor(lat.length / 2)] };
  }

  // The first phase also lets the start's aftermath pass (the worker's and API's first minute: JIT, the
  // retention schedule's first sweep, Temporal's own start-up work).
  const phases = [await measure('0 past writes', 60_000)];
  for (const n of WRITES) {
    const t = performance.now();
    await writePast(n);
    console.log(`\n(${n.toLocaleString('en')} past writes reached in ${round((performance.now() - t) / 1000, 1)} s)`);
    phases.push(await measure(`${n.toLocaleString('en')} past writes`));
  }
  console.log('');
  for (const p of phases) printTarget(`whole-stack idle CPU, ${p.label}`, p.total, '<', 5, '% of a core');
  const first = phases[0].total;
  const last = phases[phases.length - 1].total;
  console.log(`  flat: ${first} → ${last} % of a core from the first phase to the last`);
  printJson('idle', { phases });
});
