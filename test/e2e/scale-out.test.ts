// Scale-out, the short form: two worker hosts (own driver folders and WORKER_HOST), three worker
// processes and two API processes on the suite's Temporal and MongoDB, a round-robin client in front of the
// APIs (testkit/scale-out.ts), real Spark. A job launched on host-b is followed over SSE on one API and resumed
// on the other with Last-Event-ID; host-b's worker goes away (its job UNKNOWN with that cause, never FAILED) and
// comes back (the job finishes there); jobs launched meanwhile land on host-a, whose second worker is then
// killed -9 mid-load, then one API. Every job finishes once (attempt 1, one driver folder, on its own host),
// logs are read on the driver's host through either API, the retention schedule is one for all workers, and
// the APIs' metrics agree (bench/chaos-scale.ts). `npm run chaos -- --scale` is the long form, with group
// executions through both APIs.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { runScaleChaos } from '../../bench/chaos-scale';
import { startScaleOut, type ScaleOut } from '../../testkit/scale-out';

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

describe('two hosts, three workers, two APIs', () => {
  it('every job finishes once on its own host through a host going away, a worker and an API killed', async () => {
    const report = await runScaleChaos(bed!, {
      jobSeconds: 25,
      jobsOnA: 2,
      dir: path.join(inject('testDir'), id),
      log: (line) => console.log(line),
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
    // The APIs' metrics agree (both count the shared store).
    expect(report.metrics[0].length).toBeGreaterThan(0);
    expect(report.metrics[0]).toEqual(report.metrics[1]);
    // One retention sweep per period: one schedule, started on the shared queue, whatever the number of workers.
    expect(report.retentionQueue).toBe(bed!.config.TASK_QUEUE);
  }, 420_000);
});
