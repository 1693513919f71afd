// `npm run soak`: thousands of single jobs through the k8s adapter against the fake Kubernetes API server
// (pods Pending 20 ms, Running 200 ms, then Succeeded; artifacts to an S3 served by moto), with the API
// and the worker each as its own process
// (as deployed), so each one's memory can be read. Prints the resident set size (RSS) of both and the data
// files' sizes at the start, after a warm-up, every SOAK_REPORT_EVERY jobs and at the end: flat memory means no
// leak per job. Then the retention sweep runs (RETENTION_DAYS is SOAK_RETENTION_MIN minutes here), and the
// whole stack is measured idle: each process's CPU and the data files once what ended is swept.
//
//   npm run soak        SOAK_JOBS (10000), SOAK_WARMUP (200), SOAK_CONCURRENCY (16), SOAK_REPORT_EVERY (1000),
//                       SOAK_RETENTION_MIN (10), SOAK_IDLE_S (30), SOAK_SETTLE_S (900)
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../lib/config';
import { connectTemporal } from '../lib/temporal';
import { stopProc } from '../scripts/services';
import { startFakeK8s } from '../testkit/fake-k8s';
import { form, ok, request } from '../testkit/http';
import { startMoto } from '../testkit/moto';
import { spawnService, waitForHealth, waitForPoller } from '../testkit/processes';
import { freePort, startServers } from '../testkit/servers';
import { printHeader, printJson, printTarget, round } from '../testkit/stats';
import { until } from '../testkit/wait';
import { retentionScheduleId } from '../activities/retention';
import { JOB_STATES, TERMINAL_JOB_STATES } from '../domain/states';
import { defer, envInt, pool, runBench } from './lifecycle';
import { pidsMentioning, rssMiB, sizeMb, TICKS, treeTicks } from './proc-stats';
import { TINY_PY } from './stack';

const JOBS = envInt('SOAK_JOBS', 10_000);
const WARMUP = envInt('SOAK_WARMUP', 200);
const CONCURRENCY = envInt('SOAK_CONCURRENCY', 16);
const REPORT_EVERY = envInt('SOAK_REPORT_EVERY', 1000);
const RETENTION_MIN = envInt('SOAK_RETENTION_MIN', 10);
const IDLE_S = envInt('SOAK_IDLE_S', 30);
const SETTLE_S = envInt('SOAK_SETTLE_S', 900);
const IDLE_TARGET = 5; // % of one core, the whole stack
const CLUSTER = 'soak-k8s';
const ACTIVE_STATES = JOB_STATES.filter((st) => !TERMINAL_JOB_STATES.has(st)).join(',');

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const cpuLine = (cpu: Record<string, number>) =>
  Object.entries(cpu)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

// The limit allows for a loaded 2-core machine (~100 jobs a minute).
runBench('soak', 1200 + JOBS + SETTLE_S, async () => {
  printHeader(`soak — ${JOBS} jobs on the fake k8s API; RSS of the API and worker processes`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-soak-'));
  if (!process.env.KEEP_BENCH_DIR) defer('temp folder', () => rmSync(dir, { recursive: true, force: true }));
  const servers = await startServers({ dir, persistent: true });
  defer('servers', () => servers.stop(), 30_000);
  const fake = await startFakeK8s({ phases: { pendingMs: 20, runMs: 200 }, maxRecordedRequests: 1000 });
  defer('fake k8s', () => fake.stop());
  const moto = await startMoto();
  defer('moto', () => moto.stop());
  const keys = { accessKey: 'soak', secretKey: 'soak-secret' };
  const s3 = new S3Client({
    endpoint: moto.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: keys.accessKey, secretAccessKey: keys.secretKey },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'spark' }));
  s3.destroy();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    MONGO_URL: servers.mongoUrl,
    MONGO_DB: 'soak',
    TASK_QUEUE: 'soak',
    ARTIFACT_DIR: path.join(dir, 'artifacts'),
    DRIVER_DIR: path.join(dir, 'drivers'),
    API_PORT: String(await freePort()),
    API_HOST: '127.0.0.1',
    LIVY_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    RETENTION_DAYS: String(RETENTION_MIN / 1440),
  };
  const config = loadConfig(env);
  const temporal = await connectTemporal(config);
  defer('temporal client', () => temporal.connection.close());
  const worker = spawnService('worker', 'tsx', env, path.join(dir, 'worker.log'));
  defer('worker', () => stopProc(worker), 30_000);
  const api = spawnService('api', 'tsx', env, path.join(dir, 'api.log'));
  defer('api', () => stopProc(api), 30_000);
  const url = `http://127.0.0.1:${env.API_PORT}/api/v1`;
  await Promise.all([
    waitForPoller(temporal, config, worker, 180_000, path.join(dir, 'worker.log')),
    waitForHealth(url, api, 180_000, path.join(dir, 'api.log')),
  ]);
  const files = () => ({
    mongoMb: sizeMb(path.join(dir, 'data', 'mongo.mv')),
    temporalMb: round(
      sizeMb(path.join(dir, 'data', 'temporal.db')) + sizeMb(path.join(dir, 'data', 'temporal.db-wal')),
      1,
    ),
  });
  const rss: { at: string; jobs: number; api: number; worker: number; mongoMb: number; temporalMb: number }[] = [];
  const sample = (at: string, jobs: number) => {
    const s = { at, jobs, api: rssMiB(api.pid!), worker: rssMiB(worker.pid!), ...files() };
    rss.push(s);
    console.log(
      `  RSS ${at.padEnd(14)} after ${String(jobs).padStart(6)} jobs: API ${s.api} MiB, worker ${s.worker} MiB; files: mongo.mv ${s.mongoMb} MB, temporal.db ${s.temporalMb} MB`,
    );
  };
  sample('start', 0);

  await ok(url, 'POST', '/cluster', {
    name: CLUSTER,
    type: 'k8s',
    url: fake.url,
    storages: { s3: { sparkBucket: 'spark', endpoint: moto.endpoint, ...keys } },
    sparkStorage: 's3',
  });
  let submitted = 0;
  let refused = 0;
  const count = async (states: string) =>
    Number(
      (await request(url, 'GET', `/job?jobStates=${states}&clusterNames=${CLUSTER}&size=1`)).body?.totalElements ?? 0,
    );
  const run = async (n: number, label: string) => {
    const target = submitted + n;
    await pool(
      CONCURRENCY,
      () => submitted < target,
      async () => {
        const i = submitted++;
        const r = await request(
          url,
          'POST',
          '/job/submit',
          form(
            { name: `soak-${i}`, language: 'PYTHON', jobClass: 'tiny', clusterName: CLUSTER },
            { pyFiles: [TINY_PY] },
          ),
        ).catch((e: Error) => ({ status: 0, body: { message: e.message } }));
        if (r.status !== 200 && refused++ === 0)
          console.log(`  first refusal: HTTP ${r.status} ${JSON.stringify(r.body)}`);
        if ((i + 1) % REPORT_EVERY === 0 && label === 'soak') sample('during', i + 1);
      },
    );
    // None left in a state that changes (a count of ended jobs would never be reached once the hourly retention
    // sweep, which may fall due during a long run, has removed some). Accepted faster than one worker ends them, a
    // backlog drains after the last submission.
    await until(`${label} jobs ended`, async () => (await count(ACTIVE_STATES)) === 0, 1_800_000, 500);
  };
  await run(WARMUP, 'warm-up');
  sample('after warm-up', submitted);
  await run(JOBS, 'soak');
  // A moment for the last events and timers to settle.
  await new Promise((r) => setTimeout(r, 5_000));
  sample('end', submitted);

  // Retention: the sweep (hourly) is run now; what ended more than SOAK_RETENTION_MIN minutes ago goes.
  const before = await count('FINISHED,FAILED,CANCELED');
  const sweep = temporal.schedule.getHandle(retentionScheduleId(env.TASK_QUEUE!));
  const triggeredAt = Date.now();
  await sweep.trigger();
  // Done once a run the trigger started has ended (it may remove nothing, if the hourly run came first).
  await until(
    'the retention sweep',
    async () => {
      const { info } = await sweep.describe();
      const started = info.recentActions.some((a) => a.takenAt.getTime() >= triggeredAt - 1_000);
      return started && info.runningActions.length === 0;
    },
    600_000,
    1_000,
  );
  const last = await count('FINISHED,FAILED,CANCELED');
  console.log(`  retention: ${before} ended jobs before the sweep, ${last} after`);
  await new Promise((r) => setTimeout(r, 15_000)); // the sweep's writes settle, the store compacts when quiet
  sample('swept', submitted);

  // Idle: every process of the stack, its descendants included.
  const procs: Record<string, number> = {
    temporal: pidsMentioning(dir, 'temporal'),
    mongo: pidsMentioning(dir, 'Launcher.java'),
    api: api.pid!,
    worker: worker.pid!,
  };
  // What ended leaves work behind in Temporal (timers due at their deadlines, which then find nothing to do), so
  // the stack is measured in windows of IDLE_S one after another for SOAK_SETTLE_S: the last window is the
  // figure, and the printout says from when on every window was under the target.
  const window = async () => {
    const ticks0 = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, treeTicks(pid)]));
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const secs = (performance.now() - t0) / 1000;
    const cpu = Object.fromEntries(
      Object.entries(procs).map(([k, pid]) => [k, round(((treeTicks(pid) - ticks0[k]) / TICKS / secs) * 100, 1)]),
    );
    return { cpu, total: round(sum(Object.values(cpu)), 1) };
  };
  const idleStart = performance.now();
  const windows: { afterS: number; total: number }[] = [];
  let idle: Record<string, number> = {};
  let idleTotal = 0;
  do {
    ({ cpu: idle, total: idleTotal } = await window());
    const afterS = Math.round((performance.now() - idleStart) / 1000);
    windows.push({ afterS, total: idleTotal });
    console.log(`  idle, ${String(afterS).padStart(4)} s after the sweep: ${cpuLine(idle)}; whole stack ${idleTotal}`);
  } while (windows[windows.length - 1].afterS < SETTLE_S);
  // From the end of the last window over the target on (undefined: the last window itself was over).
  const lastOver = windows.findLastIndex((w) => w.total >= IDLE_TARGET);
  const settledAfterS = lastOver < 0 ? 0 : lastOver < windows.length - 1 ? windows[lastOver].afterS : undefined;
  sample('idle', submitted);

  const base = rss.find((s) => s.at === 'after warm-up')!;
  const end = rss[rss.length - 1];
  const growth = (a: number, b: number) =>
    `${b - a >= 0 ? '+' : ''}${b - a} MiB (${(((b - a) / a) * 100).toFixed(0)} %)`;
  console.log(`
  jobs          ${submitted} submitted, ${refused} refused, ${await count('FINISHED')} FINISHED, ${await count('FAILED,CANCELED')} failed
  API RSS       start ${rss[0].api} MiB, after warm-up ${base.api} MiB, end ${end.api} MiB: ${growth(base.api, end.api)} over ${JOBS} jobs
  worker RSS    start ${rss[0].worker} MiB, after warm-up ${base.worker} MiB, end ${end.worker} MiB: ${growth(base.worker, end.worker)} over ${JOBS} jobs`);
  console.log(
    `  idle CPU      % of one core over ${IDLE_S} s, ${windows[windows.length - 1].afterS} s after the sweep: ` +
      `${cpuLine(idle)}; whole stack ${idleTotal}`,
  );
  console.log(
    settledAfterS === undefined
      ? `  idle CPU      not under ${IDLE_TARGET} % of a core in the last window`
      : `  idle CPU      under ${IDLE_TARGET} % of a core in every window from ${settledAfterS} s after the sweep on`,
  );
  printTarget('idle CPU of the whole stack after the soak', idleTotal, '<', IDLE_TARGET, '% of one core');
  printJson('soak', { jobs: JOBS, refused, rss, idle, idleTotal, settledAfterS, idleWindows: windows });
});
