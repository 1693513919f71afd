// Start-up time of the worker and API processes: from spawn to the worker polling its task queue, and from
// spawn to GET /api/v1/health answering 200, against a private Temporal and MongoDB (started first, not
// counted). Each process is started and stopped BENCH_N times per way of running it:
//   tsx   the TypeScript sources through tsx; the worker bundles the workflows with webpack at start
//   dist  the compiled JavaScript of `npm run build` (node dist/*.js); the worker loads dist/workflow-bundle.js
//
//   npm run bench:startup       BENCH_N (3), BENCH_RUNNERS (tsx,dist; tsx alone before a build)
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig, ROOT } from '../lib/config';
import { connectTemporal } from '../lib/temporal';
import { stopProc, type ServiceRunner } from '../scripts/services';
import { spawnService, waitForHealth, waitForPoller } from '../testkit/processes';
import { freePort, startServers } from '../testkit/servers';
import { printHeader, printJson, printStats, round, stats } from '../testkit/stats';
import { defer, envInt, runBench } from './lifecycle';

const N = envInt('BENCH_N', 3);
// Without a build, only the sources can be measured.
const RUNNERS = (process.env.BENCH_RUNNERS ?? (existsSync(path.join(ROOT, 'dist', 'worker.js')) ? 'tsx,dist' : 'tsx'))
  .split(',')
  .map((r) => r.trim()) as ServiceRunner[];

runBench('startup', 120 + N * RUNNERS.length * 120, async () => {
  printHeader('bench:startup — process spawn → worker polling / API health 200');
  for (const r of RUNNERS)
    if (r !== 'tsx' && r !== 'dist') throw new Error(`BENCH_RUNNERS: unknown runner '${r}' (tsx, dist)`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-startup-'));
  defer('temp folder', () => rmSync(dir, { recursive: true, force: true }));
  const servers = await startServers({ dir, persistent: false });
  defer('servers', () => servers.stop(), 30_000);
  const base = {
    ...process.env,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    MONGO_URL: servers.mongoUrl,
    MONGO_DB: 'startup',
    ARTIFACT_DIR: path.join(dir, 'artifacts'),
    DRIVER_DIR: path.join(dir, 'drivers'),
    LOG_LEVEL: 'warn',
  };
  const temporal = await connectTemporal(loadConfig(base));
  defer('temporal client', () => temporal.connection.close());

  const figures: Record<string, { worker: number[]; api: number[] }> = {};
  for (let i = 0; i < N; i++) {
    // Alternating the ways of running spreads the machine's load changes over both.
    for (const runner of RUNNERS) {
      const f = (figures[runner] ??= { worker: [], api: [] });
      const env = { ...base, TASK_QUEUE: `startup-${runner}-${i}` };
      const workerLog = path.join(dir, `worker-${runner}-${i}.log`);
      let t0 = performance.now();
      const worker = spawnService('worker', runner, env, workerLog);
      try {
        await waitForPoller(temporal, loadConfig(env), worker, 120_000, workerLog, 20);
        f.worker.push(performance.now() - t0);
      } finally {
        await stopProc(worker);
      }

      const port = await freePort();
      const apiLog = path.join(dir, `api-${runner}-${i}.log`);
      t0 = performance.now();
      const api = spawnService('api', runner, { ...env, API_PORT: String(port), API_HOST: '127.0.0.1' }, apiLog);
      try {
        await waitForHealth(`http://127.0.0.1:${port}/api/v1`, api, 120_000, apiLog, 20);
        f.api.push(performance.now() - t0);
      } finally {
        await stopProc(api);
      }
      console.log(
        `  run ${i + 1}/${N} ${runner.padEnd(4)}: worker ${f.worker.at(-1)!.toFixed(0)} ms, api ${f.api.at(-1)!.toFixed(0)} ms`,
      );
    }
  }
  printStats(
    `start-up, ${N} runs each (ms from spawn to ready)`,
    RUNNERS.flatMap((r): [string, number[]][] => [
      [`worker (${r})`, figures[r].worker],
      [`api (${r})`, figures[r].api],
    ]),
  );
  printJson(
    'startup',
    Object.fromEntries(
      RUNNERS.map((r) => [
        r,
        { workerP50: round(stats(figures[r].worker).p50, 0), apiP50: round(stats(figures[r].api).p50, 0) },
      ]),
    ),
  );
});
