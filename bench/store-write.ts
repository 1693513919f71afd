// The write an execution's answer waits for (its result record, one durable upsert), one at a time against
// the MongoDB-protocol server as `npm start` runs it (persistent, in its own process): on a fresh store, then
// after BENCH_PAST_WRITES past job writes and BENCH_SETTLE_S of quiet. The tail of bench:group's aged
// executions is this write's tail. Each pass lists when its writes over 50 ms began, to tell periodic stalls
// (the store's housekeeping) from noise.
//
//   npm run bench:store     BENCH_N (3000 a pass), BENCH_PAST_WRITES (100000), BENCH_SETTLE_S (25)
import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createProjection } from '../activities/projection';
import type { JobInstanceResult } from '../domain/types';
import { Collections, connectStore, prepareStore } from '../lib/mongo';
import { ownMongo } from '../testkit/own-mongo';
import { printHeader, printJson, printStats, round, stats } from '../testkit/stats';
import { defer, envInt, runBench } from './lifecycle';
import { writePastJobs } from './past-writes';

const N = envInt('BENCH_N', 3000);
const PAST_WRITES = envInt('BENCH_PAST_WRITES', 100_000);
const SETTLE_S = envInt('BENCH_SETTLE_S', 25);

runBench('store-write', 1800, async () => {
  printHeader('bench:store — one durable result write at a time, fresh and after past writes');
  const cleanups: (() => Promise<void>)[] = [];
  defer('mongo', async () => {
    for (const c of cleanups.reverse()) await c();
  });
  const mongo = await ownMongo(cleanups);
  const store = await connectStore({
    MONGO_URL: mongo.url,
    MONGO_DB: 'bench',
  });
  defer('client', () => store.close());
  await prepareStore(store);
  const projection = createProjection(store);
  const fileMb = () => round(statSync(mongo.file).size / 2 ** 20, 0);

  let next = 0;
  const pass = async (label: string) => {
    const latencies: number[] = [];
    const stalls: string[] = [];
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      const now = Date.now();
      const result: JobInstanceResult = {
        jobInstanceId: `r${next++}`,
        groupId: 'g',
        jobId: 'g-1',
        jobConfig: {},
        startTime: now,
        endTime: now,
        result: 'ok',
      };
      const t = performance.now();
      await projection.projectResult(result, 2);
      const ms = performance.now() - t;
      latencies.push(ms);
      if (ms > 50) stalls.push(`${((t - t0) / 1000).toFixed(1)}s:${ms.toFixed(0)}ms`);
    }
    const s = stats(latencies);
    const perSecond = round(N / ((performance.now() - t0) / 1000), 0);
    printStats(`${label}: ${perSecond} writes/s, data file ${fileMb()} MB`, [['write', latencies]]);
    console.log(`  over 50 ms (${stalls.length}): ${stalls.slice(0, 40).join(' ')}${stalls.length > 40 ? ' …' : ''}`);
    return { p50: round(s.p50, 2), p99: round(s.p99, 1), max: round(s.max, 0), perSecond, over50: stalls.length };
  };

  const fresh = await pass('fresh store');
  let aged: Awaited<ReturnType<typeof pass>> | undefined;
  if (PAST_WRITES > 0) {
    const t = performance.now();
    await writePastJobs(store.col(Collections.jobs), 'past', 0, PAST_WRITES);
    console.log(
      `\n${PAST_WRITES} past writes in ${((performance.now() - t) / 1000).toFixed(0)} s; ${SETTLE_S} s of quiet`,
    );
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    aged = await pass(`after ${PAST_WRITES} past writes`);
  }
  printJson('store-write', { n: N, fresh, ...(aged ? { pastWrites: PAST_WRITES, aged } : {}) });
});
