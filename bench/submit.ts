// (a) Submit overhead: from the start of POST /api/v1/job/submit (multipart, a PYTHON job with one tiny
// pyFile) to the cluster adapter's launch call, with a recording adapter so no Spark runs.
// Sequential submissions, then 8 concurrent submitters. Target: p50 < 25 ms.
//
//   npm run bench:submit        BENCH_N (200), BENCH_CONCURRENCY (8), BENCH_WARMUP (10)
import { performance } from 'node:perf_hooks';
import { jobWorkflowId } from '../domain/ids';
import { singleJobDriverId } from '../domain/job';
import { Collections } from '../lib/mongo';
import { form, request } from '../testkit/http';
import { printHeader, printJson, printStats, printTarget, round, stats } from '../testkit/stats';
import { until } from '../testkit/wait';
import { printHistoryBreakdown } from './history';
import { envInt, pool, runBench } from './lifecycle';
import { RecordingAdapter } from './recording-adapter';
import { startBenchStack, TINY_PY } from './stack';

const N = envInt('BENCH_N', 200);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 8);
const WARMUP = envInt('BENCH_WARMUP', 10);
/** Pause between sequential submissions (0: back to back, the previous job still finishing beside the next). */
const GAP_MS = envInt('BENCH_GAP_MS', 0);

interface Sample {
  /** Request start → response (the submit call's HTTP latency). */
  http: number;
  /** Request start → adapter.launch called. */
  toLaunch: number;
  /** Response received → adapter.launch called (negative: launch came before the response). */
  afterResponse: number;
  jobId: string;
  /** Epoch ms (fractional): request sent, response received, launch called. */
  wall: { sent: number; received: number; launched: number };
}

runBench('submit', 300, async () => {
  printHeader('bench:submit — POST /job/submit → adapter.launch (recording adapter)');
  const adapter = new RecordingAdapter();
  const s = await startBenchStack({ adapterFor: async () => adapter });

  let seq = 0;
  const submitOne = async (): Promise<Sample> => {
    const body = form({ name: `bench-submit-${seq++}`, language: 'PYTHON', jobClass: 'tiny' }, { pyFiles: [TINY_PY] });
    const t0 = performance.now();
    const r = await request(s.url, 'POST', '/job/submit', body);
    const t1 = performance.now();
    if (r.status !== 200) throw new Error(`submit: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    const jobId = r.body.jobId as string;
    const tL = await adapter.launched(singleJobDriverId(jobId, 1));
    const wall = (t: number) => performance.timeOrigin + t;
    return {
      http: t1 - t0,
      toLaunch: tL - t0,
      afterResponse: tL - t1,
      jobId,
      wall: { sent: wall(t0), received: wall(t1), launched: wall(tL) },
    };
  };

  for (let i = 0; i < WARMUP; i++) await submitOne();

  const sequential: Sample[] = [];
  const seqStart = performance.now();
  for (let i = 0; i < N; i++) {
    sequential.push(await submitOne());
    if (GAP_MS > 0) await new Promise((r) => setTimeout(r, GAP_MS));
  }
  const seqSeconds = (performance.now() - seqStart) / 1000;

  const concurrent: Sample[] = [];
  let started = 0;
  const conStart = performance.now();
  await pool(
    CONCURRENCY,
    () => started++ < N,
    async () => {
      concurrent.push(await submitOne());
    },
  );
  const conSeconds = (performance.now() - conStart) / 1000;

  const rows = (xs: Sample[]): [string, number[]][] => [
    ['submit HTTP latency', xs.map((x) => x.http)],
    ['request start → launch', xs.map((x) => x.toLaunch)],
    ['response → launch', xs.map((x) => x.afterResponse)],
  ];
  printStats(
    `sequential: ${N} submissions (after ${WARMUP} warm-up), ${(N / seqSeconds).toFixed(1)} submissions/s`,
    rows(sequential),
  );
  printStats(
    `concurrent: ${N} submissions from ${CONCURRENCY} submitters, ${(N / conSeconds).toFixed(1)} submissions/s`,
    rows(concurrent),
  );
  console.log('');
  const seqLaunch = stats(sequential.map((x) => x.toLaunch));
  const conLaunch = stats(concurrent.map((x) => x.toLaunch));
  printTarget('sequential p50 request start → launch', seqLaunch.p50, '<', 25, 'ms');

  // Where the time goes, from the job workflows' histories (the last 50 sequential submissions).
  await printHistoryBreakdown(
    'sequential submissions, request → launch',
    s.temporal,
    sequential.slice(-50).map((x) => ({
      workflowId: jobWorkflowId(x.jobId),
      requestStart: x.wall.sent,
      after: [
        ['(adapter: launch called)', x.wall.launched],
        ['(client: response received)', x.wall.received],
      ],
    })),
    'ActivityTaskScheduled',
  );

  // Let the jobs finish (the recording adapter reports SUCCEEDED at once) so the worker stops idle.
  const total = WARMUP + 2 * N;
  const jobs = s.store.col(Collections.jobs);
  const finished = await until(
    'all jobs FINISHED',
    async () => ((await jobs.countDocuments({ state: 'FINISHED' })) >= total ? true : undefined),
    60_000,
    250,
  ).catch(async (e: Error) => {
    console.log(`  (${e.message}; ${await jobs.countDocuments({ state: 'FINISHED' })}/${total} FINISHED)`);
    return false;
  });
  if (finished) console.log(`  all ${total} jobs FINISHED`);
  const httpSeq = stats(sequential.map((x) => x.http));
  const httpCon = stats(concurrent.map((x) => x.http));
  printJson('submit', {
    n: N,
    concurrency: CONCURRENCY,
    sequential: {
      launchP50: round(seqLaunch.p50),
      launchP90: round(seqLaunch.p90),
      launchP99: round(seqLaunch.p99),
      launchMax: round(seqLaunch.max),
      httpP50: round(httpSeq.p50),
      httpP99: round(httpSeq.p99),
      perSecond: round(N / seqSeconds),
    },
    concurrent: {
      launchP50: round(conLaunch.p50),
      launchP90: round(conLaunch.p90),
      launchP99: round(conLaunch.p99),
      launchMax: round(conLaunch.max),
      httpP50: round(httpCon.p50),
      httpP99: round(httpCon.p99),
      perSecond: round(N / conSeconds),
    },
  });
});
