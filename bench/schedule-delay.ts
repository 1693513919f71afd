// (d) Schedule delay: from a run's nominal cron time to its job's submitTime, over at least 20 firings
// of a '@every 2s' schedule. The recording adapter stands in for the cluster (no Spark), so each run
// ends long before the next tick and the overlap policy never holds a run back.
// Target: p99 < 100 ms.
//
// Temporal's scheduler sleeps at least one second between its passes, its first pass included, so a tick less
// than a second after the schedule's creation fires one second after the creation (measured on Server 1.32:
// the scheduler workflow's first timer is 1 s even when the tick is 160 ms away). The benchmark creates its
// schedule just after a tick, so its first tick is ~1.8 s away and every firing measures the steady path;
// BENCH_ALIGN=0 creates it at once and shows the rule on the first firing.
//
//   npm run bench:schedule      BENCH_FIRINGS (20), BENCH_EVERY_S (2), BENCH_ALIGN (1)
import { Collections } from '../lib/mongo';
import { form, ok } from '../testkit/http';
import { printHeader, printJson, printStats, printTarget, round, stats } from '../testkit/stats';
import { until } from '../testkit/wait';
import { envInt, runBench } from './lifecycle';
import { RecordingAdapter } from './recording-adapter';
import { startBenchStack, TINY_PY } from './stack';

const FIRINGS = envInt('BENCH_FIRINGS', 20);
const EVERY_S = envInt('BENCH_EVERY_S', 2);
const ALIGN = envInt('BENCH_ALIGN', 1) === 1;

/** Waits until just after a tick of '@every <EVERY_S>s' (ticks are multiples of the interval since the epoch). */
async function justAfterTick(): Promise<void> {
  const every = EVERY_S * 1000;
  const wait = (every - (Date.now() % every) + 150) % every;
  await new Promise((r) => setTimeout(r, wait));
}

/** jobId of a scheduled run: `sched-<scheduleId>-<RFC 3339 nominal time>` (Temporal appends the time). */
const nominalOf = (jobId: string, scheduleId: string): number => {
  const suffix = jobId.slice(`sched-${scheduleId}-`.length);
  const t = Date.parse(suffix);
  if (!jobId.startsWith(`sched-${scheduleId}-`) || Number.isNaN(t))
    throw new Error(`job id '${jobId}' does not end with the nominal time`);
  return t;
};

runBench('schedule-delay', FIRINGS * EVERY_S + 180, async () => {
  printHeader(`bench:schedule — nominal cron time → job submitTime ('@every ${EVERY_S}s', recording adapter)`);
  const adapter = new RecordingAdapter();
  const s = await startBenchStack({ adapterFor: async () => adapter });

  const cron = `@every ${EVERY_S}s`;
  if (ALIGN) await justAfterTick();
  const created = Date.now();
  const { scheduleId } = await ok(
    s.url,
    'POST',
    '/schedule',
    form({ name: 'bench-schedule', cron, jobClass: 'tiny', language: 'PYTHON' }, { pyFiles: [TINY_PY] }),
  );
  console.log(`schedule ${scheduleId} created with cron '${cron}'; waiting for ${FIRINGS} firings`);

  const jobs = s.store.col(Collections.jobs);
  // The first tick may come up to one interval after creation; allow generous slack for a loaded machine.
  await until(
    `${FIRINGS} scheduled jobs`,
    async () => (await jobs.countDocuments({ scheduleId })) >= FIRINGS + 1,
    (FIRINGS + 1) * EVERY_S * 1000 + 60_000,
    500,
  );
  await ok(s.url, 'DELETE', `/schedule/${scheduleId}`);

  const docs = await jobs.find({ scheduleId }).sort({ submitTime: 1 }).toArray();
  // The first run's tick may predate the schedule (a tick between creation and the first poll); drop
  // runs whose nominal time is before creation, then keep FIRINGS.
  const runs = docs
    .map((d) => ({
      jobId: String(d._id),
      nominal: nominalOf(String(d._id), scheduleId),
      submitTime: d.submitTime as number,
      state: d.state as string,
    }))
    .filter((r) => r.nominal >= created - EVERY_S * 1000)
    .slice(0, FIRINGS);
  const delays = runs.map((r) => r.submitTime - r.nominal);
  const gaps = runs.slice(1).map((r, i) => r.nominal - runs[i].nominal);
  const missed = gaps.filter((g) => g !== EVERY_S * 1000).length;
  const launches = runs
    .map((r) => adapter.launches.get(`job-${r.jobId.replace(/[^A-Za-z0-9._-]/g, '')}-1`)?.wall)
    .filter((w): w is number => w !== undefined);
  const launchDelays = runs.map((r, i) => (launches[i] ?? NaN) - r.nominal).filter((x) => !Number.isNaN(x));

  console.log(
    `\n${runs.length} firings, nominal times ${new Date(runs[0].nominal).toISOString()} … ${new Date(runs[runs.length - 1].nominal).toISOString()}`,
  );
  console.log(`  ticks skipped between consecutive runs: ${missed}${missed ? ` (gaps: ${gaps.join(', ')} ms)` : ''}`);
  console.log(
    `  first tick ${runs[0].nominal - created} ms after the POST${ALIGN ? ' (created just after a tick: BENCH_ALIGN=1)' : ''}`,
  );
  printStats('delay per firing', [
    ['nominal → job submitTime', delays],
    ['  the same without the first firing', delays.slice(1)],
    ['nominal → adapter.launch', launchDelays],
  ]);
  const worst = delays.indexOf(Math.max(...delays));
  console.log(`  largest delay: firing #${worst + 1} of ${runs.length} (${runs[worst].jobId}), ${delays[worst]} ms`);
  console.log('');
  const d = stats(delays);
  printTarget('p99 nominal → submitTime', d.p99, '<', 100, 'ms');
  const l = stats(launchDelays);
  printJson('schedule-delay', {
    firings: runs.length,
    cron,
    skippedTicks: missed,
    delayP50: round(d.p50, 0),
    delayP99: round(d.p99, 0),
    delayMax: round(d.max, 0),
    launchP50: round(l.p50, 0),
    launchP99: round(l.p99, 0),
  });
});
