// Scale-out, the short form: two worker hosts (own driver folders and WORKER_HOST), three worker
// processes and two API processes on the suite's Temporal and MongoDB, a round-robin client in front of the
// APIs (testkit/scale-out.ts), real Spark. A job launched on host-b is followed over SSE on one API and resumed
// on the other with Last-Event-ID; host-b's worker goes away (its job UNKNOWN with that cause, never FAILED) and
// comes back (the job finishes there); jobs launched meanwhile land on host-a, whose second worker is then
// killed -9 mid-load, then one API. Once host-b is gone, a group of scale 1 takes executions (asynchronous and
// synchronous, alternately) and the default cluster's SPARK_SQL engine statements, both through the
// round-robin client until the end, across both kills; a schedule created through api-1 fires on host-a, api-2
// lists its jobs and pauses it. Every job finishes once (attempt 1, one driver folder, on its own host), every
// execution has one result and ran once, every statement answers its own value, every tick fired one job,
// logs are read on the driver's host through either API, the retention schedule ran once for four worker
// starts, and the APIs' metrics agree with each other and api-1's with the store (bench/chaos-scale.ts).
// `npm run chaos -- --scale` is the long form: longer jobs, more of them, a group of scale 2, more ticks.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { runScaleChaos } from '../../bench/chaos-scale';
import { sqlEngineWorkflowId } from '../../domain/sql-engine';
import { startScaleOut, type ScaleOut } from '../../testkit/scale-out';
import { within } from '../../testkit/wait';

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
afterAll(async () => {
  // An SQL engine's workflow id derives from its cluster id ('default' in every harness), and the run's Temporal is
  // shared: the bed's engine, left running on a task queue nobody serves after stop(), would hold that id, and the
  // next file's default engine would wait on it for ever. Stopped through the bed's own APIs first.
  if (bed && (await bed.call('DELETE', '/sql/engine/sparksql-default').catch(() => undefined))?.status === 200)
    await within(
      bed.temporal.workflow.getHandle(sqlEngineWorkflowId('default', 'SPARK_SQL')).result(),
      30_000,
      'the engine workflow ended',
    ).catch(() => undefined);
  await bed?.stop();
}, 120_000);

describe('two hosts, three workers, two APIs', () => {
  it('every job finishes once on its own host through a host going away, a worker and an API killed', async () => {
    const began = Date.now();
    const report = await runScaleChaos(bed!, {
      jobSeconds: 25,
      jobsOnA: 2,
      groups: { everyMs: 700, scale: 1, syncEvery: 2 },
      sql: { everyMs: 700 },
      schedule: { cron: '@every 5s', ticks: 2 },
      loadsFirst: 'group',
      dir: path.join(inject('testDir'), id),
      // Seconds since the test began: printed only when it fails (passed tests are silent).
      log: (line) => console.log(`${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s  ${line}`),
    });
    // host-b's job while its host had no worker: UNKNOWN with the cause, not FAILED by another host's guess.
    expect(report.absent.state).toBe('UNKNOWN');
    expect(report.absent.error).toContain("worker host 'host-b' is not answering");
    // Every job finished once: attempt 1, one driver folder, on the host it had to land on.
    for (const j of report.jobs)
      expect(j, `job ${j.jobId}`).toMatchObject({
        state: 'FINISHED',
        attempt: 1,
        host: j.expectedHost,
        folders: [`${j.expectedHost}/job-${j.jobId}-1`],
      });
    expect(report.jobs.map((j) => j.host).sort()).toEqual(['host-a', 'host-a', 'host-b']);
    expect(report.wrong).toBe(0);
    // Its logs, read on host-b through whichever API.
    expect(report.logsFromItsHost).toBe(true);
    // The SSE stream, resumed on the other API (and on the first again once that one died), missed nothing.
    expect(report.stream.connections).toBeGreaterThanOrEqual(2);
    expect(report.stream.http5xx).toBe(0);
    expect(report.stream.states[0]).toBe('SUBMITTED');
    expect(report.stream.states.at(-1)).toBe('FINISHED');
    expect(report.stream.states).toContain('UNKNOWN');
    expect(report.stream.inOrder, report.stream.states.join(' ')).toBe(true);
    // Socket.IO subscribers on both APIs saw the same changes: api-1's all of them, api-2's until it was killed.
    expect(report.sockets[0]).toEqual(report.stream.states);
    expect(report.sockets[1].slice(0, 4)).toEqual(['SUBMITTED', 'STARTING', 'BUSY', 'UNKNOWN']);
    // Executions through both APIs, across the worker's and the API's kill: each has one result and ran once
    // (one whose connection the API's death cut may have none: its client never learnt it was taken).
    const ex = report.executions!;
    expect(ex, ex.errors.join(' | ')).toMatchObject({ lost: 0, duplicated: 0, doubleResults: 0 });
    expect(ex.sync).toBeGreaterThan(0);
    expect(ex.submitted - ex.sync).toBeGreaterThan(0);
    expect(ex.succeeded).toBeGreaterThan(ex.submitted / 2);
    expect(ex.hosts).toEqual(['host-a']);
    // Statements through both APIs on one engine: each answered its own value or failed saying why.
    const st = report.statements!;
    expect(st, st.errors.join(' | ')).toMatchObject({ lost: 0 });
    expect(st.ok).toBeGreaterThan(st.sent / 2);
    // The schedule: created through api-1, its jobs listed through api-2; one job per tick, each run once.
    const sc = report.schedule!;
    expect(sc.seenOnOther).toBeGreaterThanOrEqual(2);
    expect(sc.unmatched).toEqual([]);
    expect(sc.ticks).toBe(sc.jobs.length);
    expect(sc.actionsTaken).toBe(sc.jobs.length);
    for (const j of sc.jobs) expect(j, j.jobId).toMatchObject({ state: 'FINISHED', attempt: 1 });
    // The APIs' metrics agree (both count the shared store, and each observes the change feeds) …
    for (const series of ['spark_jobs{', 'spark_group_executions_total{', 'spark_sql_statements_total{'])
      expect(
        report.metrics[0].some((l) => l.startsWith(series)),
        series,
      ).toBe(true);
    expect(report.metrics[0]).toEqual(report.metrics[1]);
    // … and api-1 counted each execution, statement and scheduled job once.
    for (const [what, [counted, stored]] of Object.entries(report.counted)) expect(counted, what).toBe(stored);
    // One retention sweep per period: one schedule, on the shared queue, run once for four worker starts.
    expect(report.retentionQueue).toBe(bed!.config.TASK_QUEUE);
    // One at its creation and one on each hour boundary the run crossed (a run across 09:00 UTC saw two; the
    // last one may still be on its way), never one per worker start.
    expect(report.retention.workerStarts).toBe(4);
    expect(report.retention.runs).toBeGreaterThanOrEqual(1);
    expect(report.retention.runs).toBeLessThanOrEqual(report.retention.expectedRuns);
  }, 420_000);
});
