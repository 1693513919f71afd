// (b) Sustained single-job throughput with the real k8s adapter. By default against a real kube-apiserver with
// etcd and kube-controller-manager (testkit/kube, built by scripts/setup-k8s.sh), the Helm chart's RBAC and the
// service account's TokenRequest token when the chart renders here, and the kubelet stand-in, which binds each
// driver pod, reports it Running, and ends it (exit 0, Succeeded) BENCH_POD_RUN_MS after it started.
// BENCH_K8S=fake uses the in-process fake API server instead (pods Pending 20 ms, Running 200 ms, then
// Succeeded). Artifacts go to an S3 served by moto. The API and the worker run as their own processes (as
// deployed), so the CPU each uses is its own. Submits continuously for a fixed time with a bounded number of
// submissions in flight, then lets the accepted jobs drain.
// Prints accepted and FINISHED jobs per minute, and the CPU milliseconds per job of each process (API, worker,
// kube-apiserver, etcd, kube-controller-manager, Temporal, MongoDB server, and this process: the HTTP client
// and the kubelet stand-in) from the start of the window until every accepted job has ended.
// Target (set on the fake server): > 2,000 jobs per minute both accepted and FINISHED, on a 2-core machine.
//
// BENCH_WORKERS > 1 runs that many worker processes on the one task queue (one host): where the ceiling moves
// when workers are added on the same 2 cores.
//
//   npm run bench:k8s           BENCH_SECONDS (60), BENCH_CONCURRENCY (16), BENCH_DRAIN_SECONDS (60),
//                               BENCH_POD_RUN_MS (200), BENCH_K8S (real | fake), BENCH_WORKERS (1)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../lib/config';
import { setLogLevel } from '../lib/log';
import { Collections, connectStore } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { stopProc } from '../scripts/services';
import { startFakeK8s } from '../testkit/fake-k8s';
import { form, ok, request } from '../testkit/http';
import { helmAvailable, installChartRbac } from '../testkit/kube/chart-rbac';
import { createNamespace, startControlPlane } from '../testkit/kube/control-plane';
import { startKubelet } from '../testkit/kube/kubelet';
import { startMoto } from '../testkit/moto';
import { cpuSnapshot, pidWithArg } from '../testkit/proc-cpu';
import { spawnService, waitForHealth, waitForPoller } from '../testkit/processes';
import { freePort, startServers } from '../testkit/servers';
import { quietTemporal } from '../testkit/stack';
import { printHeader, printJson, printStats, printTarget, round, stats } from '../testkit/stats';
import { until } from '../testkit/wait';
import { defer, envInt, pool, runBench } from './lifecycle';
import { TINY_PY } from './stack';

const SECONDS = envInt('BENCH_SECONDS', 60);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 16);
const DRAIN_SECONDS = envInt('BENCH_DRAIN_SECONDS', 60);
const POD_RUN_MS = envInt('BENCH_POD_RUN_MS', 200);
const FAKE = process.env.BENCH_K8S === 'fake';
const WORKERS = envInt('BENCH_WORKERS', 1);
const CLUSTER = 'bench-k8s';

interface Backend {
  /** The cluster document's connection fields. */
  connection: Record<string, unknown>;
  /** Where drivers go (K8S_NAMESPACE). */
  namespace: string;
  /** Processes of the Kubernetes side whose CPU is measured. */
  pids: Record<string, number | undefined>;
  /** Driver pods created so far, when the backend counts them. */
  podsCreated?: () => number;
  describe: string;
}

async function fakeBackend(): Promise<Backend> {
  const fake = await startFakeK8s({ phases: { pendingMs: 20, runMs: 200 }, maxRecordedRequests: 10_000_000 });
  defer('fake k8s', () => fake.stop());
  return {
    connection: { url: fake.url },
    namespace: 'default',
    pids: {},
    podsCreated: () =>
      fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods') && r.status === 201).length,
    describe: 'the in-process fake API server (pods Pending 20 ms, Running 200 ms, then Succeeded)',
  };
}

async function realBackend(dir: string): Promise<Backend> {
  const cp = await startControlPlane(path.join(dir, 'kube'));
  defer('control plane', () => cp.stop(), 30_000);
  console.log(`control plane up in ${(cp.startMs / 1000).toFixed(1)} s (${cp.url})`);
  // The chart's rights and its service account's token where the chart renders; else the bootstrap admin.
  let token = cp.adminToken;
  let namespace = 'bench-drivers';
  let rights = 'the bootstrap admin (the chart does not render here)';
  if (helmAvailable()) {
    const release = await installChartRbac(cp, 'bench', 'bench-release');
    token = release.token;
    namespace = release.driverNamespace;
    rights = `the chart's RBAC, service account ${release.serviceAccount}`;
  } else await createNamespace(cp, namespace);
  const kubelet = await startKubelet({
    cp,
    nodeName: 'bench-node',
    namespaces: [namespace],
    dir: path.join(dir, 'kubelet'),
    // Room for every pod in flight: the bench measures the service, not scheduling.
    capacity: { cpu: 100_000, memoryMiB: 100_000_000 },
    plan: () => ({ hold: ['hello from a benchmark'], exitAfterMs: POD_RUN_MS, exitCode: 0 }),
  });
  defer('kubelet stand-in', () => kubelet.stop(), 30_000);
  const [etcd, apiserver, controllerManager] = cp.pids;
  return {
    connection: { url: cp.url, caCert: cp.caCert, token },
    namespace,
    pids: { 'kube-apiserver': apiserver, etcd, 'kube-controller-manager': controllerManager },
    describe:
      `a real kube-apiserver 1.34 + etcd + kube-controller-manager, ${rights}, the kubelet stand-in ` +
      `(pods bound, Running, then exit 0 after ${POD_RUN_MS} ms)`,
  };
}

runBench('k8s-throughput', SECONDS + DRAIN_SECONDS + 420, async () => {
  printHeader(
    `bench:k8s — sustained submissions with the k8s adapter against ${FAKE ? 'the fake' : 'a real'} API server`,
  );
  if (!process.env.LOG_LEVEL) setLogLevel('warn');
  quietTemporal('WARN');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-bench-k8s-'));
  defer('temp folder', () => {
    if (process.env.KEEP_BENCH_DIR) console.error(`(kept ${dir})`);
    else rmSync(dir, { recursive: true, force: true });
  });
  const t0Setup = performance.now();
  const [servers, backend, moto] = await Promise.all([
    startServers({ dir, persistent: false }),
    FAKE ? fakeBackend() : realBackend(dir),
    startMoto(),
  ]);
  defer('servers', () => servers.stop(), 30_000);
  defer('moto', () => moto.stop());
  const keys = { accessKey: 'bench-access', secretKey: 'bench-secret' };
  const s3 = new S3Client({
    endpoint: moto.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: keys.accessKey, secretAccessKey: keys.secretKey },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'spark' }));
  s3.destroy();

  // API and worker as their own processes, as deployed.
  const id = path
    .basename(dir)
    .replace(/^spark-bench-k8s-/, '')
    .toLowerCase();
  const apiPort = await freePort();
  const base = loadConfig(process.env);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    MONGO_URL: servers.mongoUrl,
    MONGO_DB: `bench_${id}`,
    TASK_QUEUE: `bench-${id}`,
    ARTIFACT_DIR: path.join(dir, 'artifacts'),
    DRIVER_DIR: path.join(dir, 'drivers'),
    SQL_DATA_DIR: path.join(dir, 'sql'),
    // The bench's own folder (saved pod logs go to STACK_DIR/k8s-logs); the dev stack's key and Spark.
    STACK_DIR: dir,
    SECRET_KEY: base.SECRET_KEY,
    PYTHON: base.PYTHON,
    SPARK_HOME: base.SPARK_HOME,
    API_HOST: '127.0.0.1',
    API_PORT: String(apiPort),
    K8S_NAMESPACE: backend.namespace,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  };
  const config = loadConfig(env);
  const store = await connectStore(config);
  defer('mongo client', () => store.close());
  const temporal = await connectTemporal(config);
  defer('temporal client', () => temporal.connection.close());
  const url = `http://127.0.0.1:${apiPort}/api/v1`;
  const apiLog = path.join(dir, 'api.log');
  const api = spawnService('api', 'tsx', env, apiLog);
  defer('api process', () => stopProc(api), 30_000);
  const workers = Array.from({ length: WORKERS }, (_, i) => {
    const log = path.join(dir, i === 0 ? 'worker.log' : `worker-${i + 1}.log`);
    const child = spawnService('worker', 'tsx', env, log);
    defer(`worker process ${i + 1}`, () => stopProc(child), 30_000);
    return { child, log };
  });
  await Promise.all([
    waitForHealth(url, api, 90_000, apiLog),
    ...workers.map((w) => waitForPoller(temporal, config, w.child, 120_000, w.log)),
  ]);
  // Every worker polls before the window opens (waitForPoller is satisfied by the first one).
  await until(
    `${WORKERS} workers polling`,
    async () => {
      const d = await temporal.workflowService.describeTaskQueue({
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: { name: config.TASK_QUEUE },
        taskQueueType: 1,
      });
      return new Set((d.pollers ?? []).map((p) => p.identity)).size >= WORKERS;
    },
    120_000,
    300,
  );
  console.log(`stack up in ${((performance.now() - t0Setup) / 1000).toFixed(1)} s (api ${url})`);

  await ok(url, 'POST', '/cluster', {
    name: CLUSTER,
    type: 'k8s',
    ...backend.connection,
    storages: { s3: { sparkBucket: 'spark', endpoint: moto.endpoint, ...keys } },
    sparkStorage: 's3',
  });

  const jobs = store.col(Collections.jobs);
  let seq = 0;
  const submit = async (): Promise<{ ms: number; jobId?: string; error?: string }> => {
    const body = form(
      { name: `bench-k8s-${seq++}`, language: 'PYTHON', jobClass: 'tiny', clusterName: CLUSTER },
      { pyFiles: [TINY_PY] },
    );
    const t0 = performance.now();
    const r = await request(url, 'POST', '/job/submit', body).catch((e: Error) => ({
      status: 0,
      body: { message: e.message },
    }));
    const ms = performance.now() - t0;
    return r.status === 200
      ? { ms, jobId: r.body.jobId as string }
      : { ms, error: `HTTP ${r.status}: ${JSON.stringify(r.body)}` };
  };

  // A short warm-up so the first workflow tasks and the adapter's connection are not in the window.
  await pool(
    4,
    () => seq < 8,
    async () => void (await submit()),
  );
  await until(
    'warm-up jobs FINISHED',
    async () => (await jobs.countDocuments({ state: 'FINISHED' })) >= 8,
    120_000,
    200,
  );
  // Their removals end too before the window opens.
  await new Promise((r) => setTimeout(r, 2_000));

  const pids: Record<string, number | undefined> = {
    API: api.pid,
    ...Object.fromEntries(workers.map((w, i) => [i === 0 ? 'worker' : `worker ${i + 1}`, w.child.pid])),
    ...backend.pids,
    temporal: pidWithArg(String(servers.ports.temporal), /temporal$/),
    'mongo-java-server': pidWithArg(String(servers.ports.mongo), /java$/),
    [`bench (client${FAKE ? ', fake API server' : ', kubelet stand-in'})`]: process.pid,
  };
  const cpu = cpuSnapshot(pids);
  const podsBefore = backend.podsCreated?.() ?? 0;
  const latencies: number[] = [];
  const accepted: string[] = [];
  const errors: string[] = [];
  const windowMs = SECONDS * 1000;
  const wallStart = Date.now();
  const t0 = performance.now();
  // Progress every 10 s, so a long run shows it is alive.
  const progress = setInterval(() => {
    const el = (performance.now() - t0) / 1000;
    console.log(
      `  ${el.toFixed(0).padStart(4)} s: ${accepted.length} accepted (${((accepted.length / el) * 60).toFixed(0)}/min), ${errors.length} errors`,
    );
  }, 10_000);
  defer('progress timer', () => clearInterval(progress));
  await pool(
    CONCURRENCY,
    () => performance.now() - t0 < windowMs,
    async () => {
      const r = await submit();
      if (r.jobId) {
        latencies.push(r.ms);
        accepted.push(r.jobId);
      } else errors.push(r.error!);
    },
  );
  clearInterval(progress);
  // The window ends when the last in-flight submission returns.
  const elapsedS = (performance.now() - t0) / 1000;
  const wallEnd = Date.now();
  const perMin = (n: number) => (n / elapsedS) * 60;
  const pods = (backend.podsCreated?.() ?? 0) - podsBefore;
  const finishedInWindow = await jobs.countDocuments({
    state: 'FINISHED',
    endTime: { $gte: wallStart, $lte: wallEnd },
  });
  const backlog = await jobs.countDocuments({
    _id: { $in: accepted } as never,
    state: { $nin: ['FINISHED', 'FAILED', 'CANCELED'] },
  });

  // Drain: how long until every accepted job has ended (bounded).
  const drainStart = performance.now();
  const ended = () =>
    jobs.countDocuments({ _id: { $in: accepted } as never, state: { $in: ['FINISHED', 'FAILED', 'CANCELED'] } });
  const drained = await until(
    'accepted jobs ended',
    async () => (await ended()) >= accepted.length,
    DRAIN_SECONDS * 1000,
    250,
  ).then(
    () => true,
    () => false,
  );
  const drainS = (performance.now() - drainStart) / 1000;
  // The last removals (pods deleted after FINISHED is written) are part of a job's cost too.
  await new Promise((r) => setTimeout(r, 2_000));
  const used = cpu.used();
  const endedJobs = await ended();
  const byState = await jobs
    .aggregate<{ _id: string; n: number }>([
      { $match: { _id: { $in: accepted } } },
      { $group: { _id: '$state', n: { $sum: 1 } } },
    ])
    .toArray();
  const failed = await jobs
    .find({ _id: { $in: accepted } as never, state: 'FAILED' })
    .limit(3)
    .toArray();

  console.log(`\nbackend: ${backend.describe}`);
  console.log(
    `window: ${elapsedS.toFixed(1)} s, ${CONCURRENCY} submissions in flight, ${WORKERS} worker process${WORKERS > 1 ? 'es' : ''}`,
  );
  console.log(
    `  submissions accepted   ${accepted.length.toString().padStart(6)}  = ${perMin(accepted.length).toFixed(0).padStart(5)} per minute`,
  );
  console.log(
    `  submissions refused    ${errors.length.toString().padStart(6)}${errors.length ? `  (first: ${errors[0]})` : ''}`,
  );
  if (backend.podsCreated)
    console.log(
      `  driver pods created    ${pods.toString().padStart(6)}  = ${perMin(pods).toFixed(0).padStart(5)} per minute`,
    );
  console.log(
    `  jobs FINISHED          ${finishedInWindow.toString().padStart(6)}  = ${perMin(finishedInWindow).toFixed(0).padStart(5)} per minute (endTime inside the window)`,
  );
  console.log(`  not yet ended at the end of the window: ${backlog}`);
  console.log(
    `  drain: ${drained ? `every accepted job ended ${drainS.toFixed(1)} s after the window` : `NOT all ended within ${DRAIN_SECONDS} s`}; states: ${byState.map((b) => `${b._id} ${b.n}`).join(', ')}`,
  );
  for (const f of failed) console.log(`  FAILED ${f._id}: ${f.error}`);
  console.log(
    `\nCPU per job, from the window's start until every accepted job ended (+2 s), over ${endedJobs} ended jobs:`,
  );
  const perJob: Record<string, number | null> = {};
  for (const [name, ms] of Object.entries(used)) {
    const each = ms !== undefined && endedJobs ? ms / endedJobs : undefined;
    perJob[name] = each === undefined ? null : round(each, 2);
    console.log(
      `  ${name.padEnd(44)} ${each === undefined ? '   (gone or not found)' : `${each.toFixed(2).padStart(8)} ms/job  (${(ms! / 1000).toFixed(1)} s in all)`}`,
    );
  }
  printStats('submit HTTP latency', [['POST /job/submit', latencies]]);
  console.log('');
  printTarget('submissions accepted per minute', perMin(accepted.length), '>', 2000, '/min');
  printTarget('jobs FINISHED per minute', perMin(finishedInWindow), '>', 2000, '/min');
  const l = stats(latencies);
  printJson('k8s-throughput', {
    backend: FAKE ? 'fake' : 'real',
    seconds: round(elapsedS),
    concurrency: CONCURRENCY,
    workers: WORKERS,
    podRunMs: FAKE ? 200 : POD_RUN_MS,
    acceptedPerMin: round(perMin(accepted.length), 0),
    ...(backend.podsCreated ? { podsPerMin: round(perMin(pods), 0) } : {}),
    finishedPerMin: round(perMin(finishedInWindow), 0),
    refused: errors.length,
    backlogAtEnd: backlog,
    drainSeconds: drained ? round(drainS) : null,
    submitP50: round(l.p50),
    submitP99: round(l.p99),
    cpuMsPerJob: perJob,
  });
});
