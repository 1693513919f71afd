// The job workflow with a replaced cluster adapter (no Spark): retries, a worker crash mid-watch,
// cancellation mid-launch, and the projection's refusal to move a state backwards. Real Temporal, real
// MongoDB; only the adapter is a fake.
import { NativeConnection, Worker } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createActivities } from '../../activities';
import type { ClusterAdapter, DriverSpec, DriverStatus } from '../../domain/driver';
import { createProjection } from '../../activities/projection';
import { jobWorkflowId } from '../../domain/ids';
import { SUBMITTED_VERSION } from '../../domain/job';
import type { Job } from '../../domain/types';
import { Collections } from '../../lib/mongo';
import { jobQuery } from '../../workflows/job';
import { call, eventually, form, startHarness, type Harness } from '../harness';

/** A cluster whose drivers do what the test says: `script[driverId]` lists the phases status() returns. */
function fakeCluster() {
  const launches: string[] = [];
  const removed: string[] = [];
  const phases = new Map<string, DriverStatus['phase'][]>();
  let next: DriverStatus['phase'][] = ['RUNNING', 'SUCCEEDED'];
  /** Phases of drivers not launched yet, by driverId (else `next`). */
  const planned = new Map<string, DriverStatus['phase'][]>();
  let launchDelayMs = 0;
  const adapter: ClusterAdapter = {
    async launch(spec: DriverSpec) {
      await new Promise((r) => setTimeout(r, launchDelayMs));
      if (!phases.has(spec.driverId)) {
        launches.push(spec.driverId);
        phases.set(spec.driverId, [...(planned.get(spec.driverId) ?? next)]);
      }
      return { phase: 'PENDING' };
    },
    async status(id) {
      const list = phases.get(id);
      if (!list) return { phase: 'MISSING' };
      const phase = list.length > 1 ? list.shift()! : list[0];
      return phase === 'FAILED' ? { phase, message: `try ${id} failed`, exitCode: 1 } : { phase, appId: `app-${id}` };
    },
    async logs() {
      return [];
    },
    async remove(id) {
      removed.push(id);
      phases.set(id, ['FAILED']);
    },
  };
  return {
    adapter,
    launches,
    removed,
    hold: () => (next = ['RUNNING']),
    plan: (p: DriverStatus['phase'][]) => (next = p),
    set: (id: string, p: DriverStatus['phase'][]) => phases.set(id, p),
    /** The phases a driver will go through once launched: no race with a fast watch. */
    planFor: (id: string, p: DriverStatus['phase'][]) => planned.set(id, p),
    slowLaunch: (ms: number) => (launchDelayMs = ms),
  };
}

let h: Harness;
const fake = fakeCluster();
const bundle = () => ({ code: readFileSync(inject('bundlePath'), 'utf8') });

async function startWorker(): Promise<{ worker: Worker; done: Promise<void> }> {
  const connection = await NativeConnection.connect({ address: h.config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    taskQueue: h.config.TASK_QUEUE,
    workflowBundle: bundle(),
    activities: createActivities({ config: h.config, store: h.store, adapterFor: async () => fake.adapter }),
  });
  return { worker, done: worker.run().finally(() => connection.close()) };
}

const submit = async (fields: Record<string, string> = {}) => {
  const r = await call(
    h,
    'POST',
    '/job/submit',
    form(
      { name: 'fake', language: 'PYTHON', jobClass: 'main', ...fields },
      { pyFiles: [{ name: 'main.py', content: 'print(1)' }] },
    ),
  );
  expect(r.status).toBe(200);
  return r.body.jobId as string;
};
const job = async (id: string) => (await call(h, 'GET', `/job/${id}`)).body;
const until = (id: string, state: string) =>
  eventually(async () => ((await job(id)).state === state ? job(id) : undefined), 30_000, 100);

beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(async () => h?.stop());

/** A single job's record as the projection writes it, without its state. */
const projectedJob = (jobId: string): Omit<Job, 'state'> => ({
  jobId,
  jobName: 'p',
  jobType: 'SINGLE',
  tags: '',
  language: 'PYTHON',
  clusterName: 'default',
  jobConfig: '',
  args: [],
  pyRequirements: '',
  packages: '',
  submitTime: 1,
  maxRetries: 0,
  attempt: 1,
  memorySettings: { dynamicAllocation: false },
});

describe('job workflow with a replaced adapter', () => {
  it('retries failed tries, keeping the jobId, and finishes on the third attempt', async () => {
    const w = await startWorker();
    try {
      fake.plan(['RUNNING', 'FAILED']);
      const id = await submit({ maxRetries: '2' });
      // Tries 1 and 2 fail (the default plan); the third succeeds. Planned before it launches: a fast watch
      // could otherwise see it fail before the test says otherwise.
      fake.planFor(`job-${id}-3`, ['RUNNING', 'SUCCEEDED']);
      await eventually(async () => fake.launches.includes(`job-${id}-2`), 30_000, 50);
      await eventually(async () => fake.launches.includes(`job-${id}-3`), 30_000, 50);
      const done = await until(id, 'FINISHED');
      expect(done).toMatchObject({ attempt: 3, maxRetries: 2, appId: `app-job-${id}-3` });
      expect(done.error).toBeUndefined();
      // FINISHED shows first; the last driver goes right after.
      await eventually(async () => fake.removed.includes(`job-${id}-3`), 10_000, 50);
      expect(fake.removed).toEqual(expect.arrayContaining([`job-${id}-1`, `job-${id}-2`, `job-${id}-3`]));
    } finally {
      w.worker.shutdown();
      await w.done;
    }
  });

  it('launches and removals run with a 30 s heartbeat timeout, as watches do', async () => {
    // A worker lost during one is noticed within 30 s, not at the start-to-close timeout (minutes); and an
    // activity that ended leaves Temporal no timer due minutes later (activities/heartbeat.ts).
    const w = await startWorker();
    try {
      fake.plan(['RUNNING', 'FAILED']);
      const id = await submit({ maxRetries: '1' });
      fake.planFor(`job-${id}-2`, ['RUNNING', 'SUCCEEDED']);
      await until(id, 'FINISHED');
      await eventually(async () => fake.removed.includes(`job-${id}-2`), 10_000, 50);
      const history = await h.temporal.workflow.getHandle(jobWorkflowId(id)).fetchHistory();
      const scheduled = (history.events ?? []).flatMap((e) => {
        const a = e.activityTaskScheduledEventAttributes;
        return a ? [{ type: a.activityType?.name, heartbeatS: Number(a.heartbeatTimeout?.seconds ?? 0) }] : [];
      });
      const types = scheduled.map((a) => a.type);
      for (const t of ['launchDriver', 'removeDriver', 'watchJobDriver']) expect(types).toContain(t);
      for (const a of scheduled.filter((x) => /^(launch|remove|watch)/.test(x.type ?? '')))
        expect(a, `${a.type}`).toEqual({ type: a.type, heartbeatS: 30 });
    } finally {
      fake.plan(['RUNNING', 'SUCCEEDED']);
      w.worker.shutdown();
      await w.done;
    }
  });

  it('survives a worker crash while watching: one driver, and the job still finishes', async () => {
    fake.hold();
    let w = await startWorker();
    const id = await submit();
    await until(id, 'BUSY');
    // The worker goes away mid-watch; another takes over the workflow and the heartbeating watch.
    w.worker.shutdown();
    await w.done;
    fake.set(`job-${id}-1`, ['RUNNING', 'SUCCEEDED']);
    w = await startWorker();
    try {
      const done = await until(id, 'FINISHED');
      expect(done.attempt).toBe(1);
      expect(fake.launches.filter((d) => d.startsWith(`job-${id}-`))).toEqual([`job-${id}-1`]);
    } finally {
      w.worker.shutdown();
      await w.done;
    }
  });

  it.each([
    { action: 'stop', end: 'FINISHED' },
    { action: 'cancel', end: 'CANCELED' },
  ])('a job ended by $action keeps the start time and appId its watch wrote with BUSY', async ({ action, end }) => {
    const w = await startWorker();
    try {
      fake.hold();
      fake.slowLaunch(0);
      const id = await submit();
      const busy = await until(id, 'BUSY');
      expect(busy.startTime).toBeGreaterThan(0);
      expect(busy.appId).toBe(`app-job-${id}-1`);
      // The watch wrote BUSY and watches on; the workflow, which has not heard back from it, ends the job.
      expect((await call(h, 'POST', `/job/${id}/${action}`)).status).toBe(200);
      const done = await until(id, end);
      expect(done).toMatchObject({ startTime: busy.startTime, appId: busy.appId });
      expect(done.endTime).toBeGreaterThanOrEqual(busy.startTime);
      // The workflow's own record, for operators in the Temporal UI: its query (and a stopped job's result).
      const handle = h.temporal.workflow.getHandle(jobWorkflowId(id));
      const kept = { state: end, startTime: busy.startTime, appId: busy.appId };
      if (action === 'stop') expect(await handle.result()).toMatchObject(kept);
      else await expect(handle.result()).rejects.toThrow();
      expect(await handle.query(jobQuery)).toMatchObject(kept);
    } finally {
      w.worker.shutdown();
      await w.done;
    }
  });

  it('cancels mid-launch and still removes the driver', async () => {
    const w = await startWorker();
    try {
      fake.hold();
      fake.slowLaunch(1500);
      const id = await submit();
      await until(id, 'STARTING');
      expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
      const done = await until(id, 'CANCELED');
      expect(done.error).toMatch(/cancel/);
      await eventually(async () => fake.removed.includes(`job-${id}-1`), 10_000, 50);
    } finally {
      fake.slowLaunch(0);
      w.worker.shutdown();
      await w.done;
    }
  });

  it('never moves a record backwards', async () => {
    const p = createProjection(h.store);
    const base = projectedJob('proj-1');
    expect(await p.projectJob({ ...base, state: 'BUSY' }, 3)).toBe(true);
    expect(await p.projectJob({ ...base, state: 'STARTING' }, 2)).toBe(false);
    expect(await p.projectJob({ ...base, state: 'BUSY' }, 3)).toBe(false);
    expect((await job('proj-1')).state).toBe('BUSY');
    expect(await p.projectJob({ ...base, state: 'FINISHED' }, 4)).toBe(true);
    expect((await job('proj-1')).state).toBe('FINISHED');
  });

  it("writes SUBMITTED before a first STARTING that finds no record: the API's own write came late or never", async () => {
    const p = createProjection(h.store);
    const col = h.store.col(Collections.jobs);
    const base = projectedJob('proj-late-api');
    const stream = col.watch([], { fullDocument: 'updateLookup' });
    await stream.tryNext();
    // The launch activity's STARTING (version 2) lands while no record exists.
    expect(await p.projectStarting({ ...base, state: 'STARTING' }, 2)).toBe(true);
    // The API's SUBMITTED write, arriving after, is older: dropped.
    expect(await p.projectJob({ ...base, state: 'SUBMITTED' }, SUBMITTED_VERSION)).toBe(false);
    const states: string[] = [];
    await eventually(
      async () => {
        for (let c = await stream.tryNext(); c; c = await stream.tryNext()) {
          const d = (c as { fullDocument?: Job }).fullDocument;
          if (d?.jobId === base.jobId) states.push(d.state);
        }
        return states.length >= 2;
      },
      10_000,
      20,
    );
    await stream.close();
    expect(states).toEqual(['SUBMITTED', 'STARTING']);
    expect(await col.findOne({ _id: base.jobId } as Document)).toMatchObject({ state: 'STARTING', version: 2 });
    // The usual case, the API's record there first: one write, STARTING over it; a retried try writes no SUBMITTED.
    expect(await p.projectStarting({ ...base, state: 'STARTING' }, 2)).toBe(false);
    expect(await p.projectStarting({ ...base, jobId: 'proj-retry', attempt: 2, state: 'STARTING' }, 7)).toBe(true);
    expect(await col.findOne({ _id: 'proj-retry' } as Document)).toMatchObject({ state: 'STARTING', version: 7 });
  });

  it('keeps an ended job ended, and a start time the watch wrote, when the workflow ends the job after a race', async () => {
    const p = createProjection(h.store);
    const base = projectedJob('proj-2');
    // The watch wrote BUSY with the start time; a stop cancelled it, and the workflow, still at STARTING,
    // writes FINISHED without one.
    expect(await p.projectJob({ ...base, state: 'BUSY', startTime: 1234, appId: 'app-1' }, 3)).toBe(true);
    expect(await p.projectJob({ ...base, state: 'FINISHED', endTime: 2000 }, 4)).toBe(true);
    expect(await job('proj-2')).toMatchObject({ state: 'FINISHED', startTime: 1234, appId: 'app-1', endTime: 2000 });
    // The watch wrote FINISHED; a cancel then makes the workflow write CANCELED: the end stays FINISHED.
    expect(await p.projectJob({ ...base, state: 'CANCELED', startTime: 1234, endTime: 2100 }, 5)).toBe(false);
    expect(await job('proj-2')).toMatchObject({ state: 'FINISHED', endTime: 2000 });
    // The same end written again (a cleanup note) goes through.
    expect(await p.projectJob({ ...base, state: 'FINISHED', startTime: 1234, endTime: 2000, cleanup: 'x' }, 6)).toBe(
      true,
    );
    expect((await job('proj-2')).cleanup).toBe('x');
  });
});
