// Scale-out, the short form: two worker hosts (own driver folders and WORKER_HOST), three worker
// processes and two API processes on the suite's Temporal and MongoDB, a round-robin client in front of the
// APIs (testkit/scale-out.ts), real Spark. A job launched on host-b is followed over SSE on one API and resumed
// on the other with Last-Event-ID; host-b's worker goes away (its job UNKNOWN with that cause, never FAILED) and
// comes back (the job finishes there); jobs launched meanwhile land on host-a, whose second worker is then
// killed -9 mid-load, then one API. Every job finishes once (attempt 1, one driver folder, on its own host),
// logs are read on the driver's host through either API, the retention schedule is one for all workers, and
// the APIs' metrics agree. `npm run chaos -- --scale` is the long form.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { followJob } from '../../bench/chaos-sse';
import { statesInOrder } from '../../bench/chaos-run';
import { retentionScheduleId } from '../../activities/retention';
import { form } from '../../testkit/http';
import { startScaleOut, HOSTS, type ScaleOut } from '../../testkit/scale-out';
import { eventually } from '../../testkit/wait';

const SLOW_APP = `
import sys, time
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
for i in range(int(sys.argv[1])):
    spark.sparkContext.parallelize(range(100), 2).sum()
    time.sleep(1)
print("SCALE_DONE")
spark.stop()
`;

let bed: ScaleOut | undefined;
const id = `so${Date.now().toString(36)}`;

beforeAll(async () => {
  bed = await startScaleOut({
    temporalAddress: inject('temporalAddress'),
    mongoUrl: inject('mongoUrl'),
    dir: path.join(inject('testDir'), id),
    id,
    prefix: 'test',
    // host-b's worker first and alone, so the first job lands there; host-a's two come later.
    workers: ['host-b'],
    env: {
      WORKFLOW_BUNDLE: inject('bundlePath'),
      WATCH_INTERVAL_MS: '300',
      HOST_ABSENT_MS: '1000',
      CONSOLE_DIR: inject('consoleDir'),
      LAUNCH_AT_SUBMIT: 'off',
    },
  });
}, 180_000);
afterAll(async () => bed?.stop(), 60_000);

const submit = async (name: string, seconds: number, tags: string) => {
  const r = await bed!.call(
    'POST',
    '/job/submit',
    form(
      { name, language: 'PYTHON', jobClass: 'slow', args: String(seconds), tags },
      { pyFiles: [{ name: 'slow.py', content: SLOW_APP }] },
    ),
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.jobId as string;
};
const jobOf = async (jobId: string) => (await bed!.call('GET', `/job/${jobId}`)).body as Record<string, unknown>;
const until = async (jobId: string, ok: (j: Record<string, unknown>) => boolean, ms: number) =>
  eventually(async () => {
    const j = await jobOf(jobId);
    return ok(j) ? j : undefined;
  }, ms);
/** The hosts whose driver folders hold a driver of this job. */
const foldersOf = (jobId: string) =>
  HOSTS.flatMap((h) =>
    readdirSync(bed!.driverDir(h))
      .filter((d) => d.includes(jobId))
      .map((d) => `${h}/${d}`),
  );
/** `name{labels} value` lines of a metric family, from one API's /metrics. */
const metricLines = async (origin: string, family: string) => {
  const text = await (await fetch(`${origin}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${family}{`) || l.startsWith(`${family} `))
    .sort();
};

describe('two hosts, three workers, two APIs', () => {
  it('every job finishes once on its own host through a host going away, a worker and an API killed', async () => {
    const b = bed!;
    const [api1, api2] = b.apis;
    // Both APIs observe the change feeds from their first scrape on.
    for (const a of b.apis) expect((await fetch(`${a.origin}/metrics`)).status).toBe(200);

    // 1. A job on host-b (its only worker so far), followed over SSE: first on api-1, then on api-2.
    const tag1 = `scale=${id}-1`;
    let connections = 0;
    // First api-1; after a cut api-2, and api-1 again once api-2 is dead (what a balancer would do).
    const nextApi = () => (connections++ === 0 || !api2.alive() ? api1.url : api2.url);
    const follower = followJob(nextApi, `tags=${encodeURIComponent(tag1)}`);
    await follower.connected;
    const j1 = await submit('on-b', 25, tag1);
    const busy1 = await until(j1, (j) => j.state === 'BUSY', 90_000);
    expect(busy1.host).toBe('host-b');
    follower.cut(); // the client comes back to the other API with the last event id

    // 2. host-a's two workers start; host-b's goes away (stopped). Its job shows why and is not failed.
    await Promise.all([b.addWorker('host-a'), b.addWorker('host-a')]);
    const b1 = b.workers.find((w) => w.host === 'host-b')!;
    b1.child.kill('SIGTERM');
    const unknown = await until(j1, (j) => j.state !== 'BUSY', 30_000);
    expect(unknown.state).toBe('UNKNOWN');
    expect(String(unknown.error)).toContain("worker host 'host-b' is not answering");

    // 3. Meanwhile new jobs (through both APIs) land on host-a; one of its workers is killed -9 mid-load.
    const more = await Promise.all([submit('on-a-1', 12, `scale=${id}-2`), submit('on-a-2', 12, `scale=${id}-3`)]);
    for (const j of more) expect((await until(j, (r) => r.state === 'BUSY', 90_000)).host).toBe('host-a');
    b.workers.filter((w) => w.host === 'host-a')[1].kill();
    // The metrics of both APIs agree while both live (the gauges count the shared store).
    const [m1, m2] = await Promise.all(b.apis.map((a) => metricLines(a.origin, 'spark_jobs')));
    expect(m1.length).toBeGreaterThan(0);
    expect(m1).toEqual(m2);

    // 4. host-b comes back: its job goes on there. Then api-2 is killed -9; the client goes on through api-1.
    await b.addWorker('host-b');
    api2.kill();
    const all = [j1, ...more];
    const ended = await Promise.all(
      all.map((j) => until(j, (r) => ['FINISHED', 'FAILED', 'CANCELED'].includes(String(r.state)), 150_000)),
    );
    for (const j of ended) expect(j, `job ${String(j.jobId)}`).toMatchObject({ state: 'FINISHED', attempt: 1 });
    expect(ended.map((j) => j.host)).toEqual(['host-b', 'host-a', 'host-a']);
    // Once: one driver, on the job's host only (it is removed after the end; its folder stays until retention).
    for (const j of ended) expect(foldersOf(String(j.jobId))).toEqual([`${String(j.host)}/job-${String(j.jobId)}-1`]);
    // Logs of host-b's job, read on host-b.
    const logs = await b.call('GET', `/job/${j1}/logs?logSize=2000`);
    expect(logs.status).toBe(200);
    expect(JSON.stringify(logs.body)).toContain('SCALE_DONE');

    // The SSE stream, resumed on the other API, missed nothing.
    await eventually(async () => (follower.states.at(-1) === 'FINISHED' ? true : undefined), 20_000);
    follower.close();
    expect(connections).toBeGreaterThanOrEqual(2);
    expect(follower.http5xx).toBe(0);
    expect(follower.states[0]).toBe('SUBMITTED');
    expect(statesInOrder(follower.states), follower.states.join(' ')).toBe(true);
    expect(follower.states).toContain('UNKNOWN');

    // One retention schedule for all four worker processes, whose runs are workflows on the shared queue.
    const sched = await b.temporal.schedule.getHandle(retentionScheduleId(b.config.TASK_QUEUE)).describe();
    expect(sched.action.taskQueue).toBe(b.config.TASK_QUEUE);
  }, 420_000);
});
