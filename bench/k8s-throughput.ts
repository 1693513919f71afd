// (b) Sustained single-job throughput with the real k8s adapter against the in-process fake Kubernetes
// API server (pods Pending 20 ms, Running 200 ms, then Succeeded; artifacts to an S3 served by moto). Submits continuously for a fixed
// time with a bounded number of submissions in flight, then lets the accepted jobs drain.
// Target: > 2,000 jobs per minute both accepted and FINISHED, on a 2-core machine. Submissions no
// longer wait for the workflow, so the two can differ: what is accepted but not yet ended shows as the backlog.
//
//   npm run bench:k8s           BENCH_SECONDS (60), BENCH_CONCURRENCY (16), BENCH_DRAIN_SECONDS (60)
import { performance } from 'node:perf_hooks';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Collections } from '../lib/mongo';
import { startFakeK8s } from '../testkit/fake-k8s';
import { form, ok, request } from '../testkit/http';
import { startMoto } from '../testkit/moto';
import { printHeader, printJson, printStats, printTarget, round, stats } from '../testkit/stats';
import { until } from '../testkit/wait';
import { defer, envInt, pool, runBench } from './lifecycle';
import { startBenchStack, TINY_PY } from './stack';

const SECONDS = envInt('BENCH_SECONDS', 60);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 16);
const DRAIN_SECONDS = envInt('BENCH_DRAIN_SECONDS', 60);
const CLUSTER = 'bench-k8s';

runBench('k8s-throughput', SECONDS + DRAIN_SECONDS + 180, async () => {
  printHeader('bench:k8s — sustained submissions with the k8s adapter against the fake API server');
  const fake = await startFakeK8s({ phases: { pendingMs: 20, runMs: 200 }, maxRecordedRequests: 10_000_000 });
  defer('fake k8s', () => fake.stop());
  const moto = await startMoto();
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
  const s = await startBenchStack();

  await ok(s.url, 'POST', '/cluster', {
    name: CLUSTER,
    type: 'k8s',
    url: fake.url,
    storages: { s3: { sparkBucket: 'spark', endpoint: moto.endpoint, ...keys } },
    sparkStorage: 's3',
  });

  const jobs = s.store.col(Collections.jobs);
  let seq = 0;
  const submit = async (): Promise<{ ms: number; jobId?: string; error?: string }> => {
    const body = form(
      { name: `bench-k8s-${seq++}`, language: 'PYTHON', jobClass: 'tiny', clusterName: CLUSTER },
      { pyFiles: [TINY_PY] },
    );
    const t0 = performance.now();
    const r = await request(s.url, 'POST', '/job/submit', body).catch((e: Error) => ({
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
    60_000,
    200,
  );

  const podPosts = () =>
    fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods') && r.status === 201).length;
  const podsBefore = podPosts();
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
  const pods = podPosts() - podsBefore;
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
  const drained = await until(
    'accepted jobs ended',
    async () =>
      (await jobs.countDocuments({
        _id: { $in: accepted } as never,
        state: { $in: ['FINISHED', 'FAILED', 'CANCELED'] },
      })) >= accepted.length,
    DRAIN_SECONDS * 1000,
    250,
  ).then(
    () => true,
    () => false,
  );
  const drainS = (performance.now() - drainStart) / 1000;
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

  console.log(
    `\nwindow: ${elapsedS.toFixed(1)} s, ${CONCURRENCY} submissions in flight, fake pods Pending 20 ms → Running 200 ms → Succeeded`,
  );
  console.log(
    `  submissions accepted   ${accepted.length.toString().padStart(6)}  = ${perMin(accepted.length).toFixed(0).padStart(5)} per minute`,
  );
  console.log(
    `  submissions refused    ${errors.length.toString().padStart(6)}${errors.length ? `  (first: ${errors[0]})` : ''}`,
  );
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
  printStats('submit HTTP latency', [['POST /job/submit', latencies]]);
  console.log('');
  printTarget('submissions accepted per minute', perMin(accepted.length), '>', 2000, '/min');
  printTarget('jobs FINISHED per minute', perMin(finishedInWindow), '>', 2000, '/min');
  const l = stats(latencies);
  printJson('k8s-throughput', {
    seconds: round(elapsedS),
    concurrency: CONCURRENCY,
    acceptedPerMin: round(perMin(accepted.length), 0),
    podsPerMin: round(perMin(pods), 0),
    finishedPerMin: round(perMin(finishedInWindow), 0),
    refused: errors.length,
    backlogAtEnd: backlog,
    drainSeconds: drained ? round(drainS) : null,
    submitP50: round(l.p50),
    submitP99: round(l.p99),
  });
});
