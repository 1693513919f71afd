// The single job workflow on a real Temporal dev server with replaced activities: a whole run, retries
// up to maxRetries, launch failures, stop, and cancellation mid-launch with cleanup.
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobWorkflowId } from '../../domain/ids';
import type { JobWorkflowInput } from '../../domain/job';
import { newJobRecord, singleJobDriverId, SUBMITTED_VERSION } from '../../domain/job';
import { acceptedUpdate, jobQuery, stopJobUpdate, type singleJobWorkflow } from '../../workflows/job';
import { fakeCluster } from './fake-activities';
import { eventually, startWorkflowEnv, TASK_QUEUE, type WorkflowTestEnv } from './workflow-env';
import { sparkSpec } from '../../testkit/spark-spec';

const cluster = fakeCluster({ phase: 'PENDING' });
let t: WorkflowTestEnv;

beforeAll(async () => {
  t = await startWorkflowEnv(cluster.activities);
});
afterAll(async () => t?.stop());

const spec = sparkSpec({
  name: 'etl',
  jobClass: 'main.py',
  artifacts: { jars: [], files: [], pyFiles: ['store/main.py'] },
  tags: { team: 'data' },
});

let n = 0;
async function submit(
  maxRetries = 0,
): Promise<{ id: string; h: WorkflowHandle<typeof singleJobWorkflow>; driver: (attempt: number) => string }> {
  const id = `job-${Date.now()}-${++n}`;
  const input: JobWorkflowInput = { spec, maxRetries };
  const h = await t.env.client.workflow.start<typeof singleJobWorkflow>('singleJobWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: jobWorkflowId(id),
    args: [input],
  });
  return { id, h, driver: (attempt) => singleJobDriverId(id, attempt) };
}

describe('single job workflow', () => {
  it('launches, follows the driver to the end, removes it and returns the FINISHED record', async () => {
    const { id, h, driver } = await submit();
    expect(await h.executeUpdate(acceptedUpdate)).toEqual({ jobId: id });
    await eventually(() => cluster.launched(driver(1)), 20_000, 'launch');
    cluster.set(driver(1), 'RUNNING', { appId: 'app-1' });
    await eventually(() => cluster.read.job(id)?.state === 'BUSY', 20_000, 'BUSY');
    // The watch activity wrote BUSY itself (no workflow task for it); the workflow holds that record too.
    const busy = cluster.read.job(id)!;
    expect(busy).toMatchObject({ state: 'BUSY', appId: 'app-1' });
    expect(busy.startTime).toBeGreaterThan(0);
    expect(cluster.busyWrites).toContain(id);
    cluster.set(driver(1), 'SUCCEEDED', { appId: 'app-1' });
    const done = await h.result();
    expect(done).toMatchObject({ jobId: id, state: 'FINISHED', attempt: 1, appId: 'app-1' });
    expect(done.startTime).toBe(busy.startTime);
    expect(await h.query(jobQuery)).toMatchObject({ state: 'FINISHED', appId: 'app-1' });
    expect(done.endTime).toBeGreaterThanOrEqual(done.startTime!);
    // Every status seen is written; the states, each once in order:
    const states = cluster.read.jobStates(id).filter((s, i, all) => s !== all[i - 1]);
    expect(states).toEqual(['SUBMITTED', 'STARTING', 'BUSY', 'FINISHED']);
    expect(cluster.removed).toContain(driver(1));
    // ...and FINISHED and the removal too: the job ended without a workflow task of its own for them.
    expect(cluster.finishWrites).toContain(id);
  });

  it('retries a failed try while attempt ≤ maxRetries, then fails with the last reason', async () => {
    const { id, h, driver } = await submit(1);
    await eventually(() => cluster.launched(driver(1)), 20_000, 'first try');
    cluster.set(driver(1), 'FAILED', { message: 'exit 1' });
    await eventually(() => cluster.launched(driver(2)), 20_000, 'second try');
    expect(cluster.read.job(id)).toMatchObject({ attempt: 2, error: 'attempt 1 failed: exit 1' });
    cluster.set(driver(2), 'MISSING');
    const done = await h.result();
    expect(done).toMatchObject({ state: 'FAILED', attempt: 2, error: 'the driver disappeared' });
    expect(cluster.launches.filter((l) => l.driverId.startsWith(`job-${id}-`)).map((l) => l.driverId)).toEqual([
      driver(1),
      driver(2),
    ]);
    expect(cluster.removed).toEqual(expect.arrayContaining([driver(1), driver(2)]));
  });

  it('finishes on a later attempt without the earlier error', async () => {
    const { h, driver } = await submit(2);
    await eventually(() => cluster.launched(driver(1)), 20_000, 'first try');
    cluster.set(driver(1), 'FAILED');
    await eventually(() => cluster.launched(driver(2)), 20_000, 'second try');
    cluster.set(driver(2), 'SUCCEEDED');
    const done = await h.result();
    expect(done).toMatchObject({ state: 'FINISHED', attempt: 2 });
    expect(done.error).toBeUndefined();
  });

  it('retries a launch that fails for a while, and fails at once on a spec that cannot run', async () => {
    const a = await submit();
    cluster.failLaunch(a.driver(1), new Error('API server unreachable'));
    cluster.set(a.driver(1), 'SUCCEEDED');
    expect(await a.h.result()).toMatchObject({ state: 'FINISHED' });

    const b = await submit(3);
    cluster.failLaunch(b.driver(1), ApplicationFailure.nonRetryable('no module main.py among pyFiles', 'InvalidSpec'));
    expect(await b.h.result()).toMatchObject({ state: 'FAILED', attempt: 1, error: 'no module main.py among pyFiles' });
    expect(cluster.launched(b.driver(2))).toBe(false);
  });

  it('stops on request: the driver goes and the job is FINISHED; a second stop is refused', async () => {
    const { id, h, driver } = await submit();
    await eventually(() => cluster.launched(driver(1)), 20_000, 'launch');
    cluster.set(driver(1), 'RUNNING');
    await eventually(() => cluster.read.job(id)?.state === 'BUSY', 20_000, 'BUSY');
    await h.executeUpdate(stopJobUpdate);
    expect(await h.result()).toMatchObject({ state: 'FINISHED' });
    expect(cluster.removed).toContain(driver(1));
    await expect(h.executeUpdate(stopJobUpdate)).rejects.toThrow();
  });

  it('cancelled mid-launch, it removes the driver and ends CANCELED', async () => {
    const pending = `job-${Date.now()}-slow`;
    cluster.slowLaunch(singleJobDriverId(pending, 1), 3_000);
    const h = await t.env.client.workflow.start<typeof singleJobWorkflow>('singleJobWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: jobWorkflowId(pending),
      args: [{ spec, maxRetries: 0 }],
    });
    await eventually(() => cluster.read.job(pending)?.state === 'STARTING', 20_000, 'STARTING');
    await h.cancel();
    // CANCELED at once, while the launch still runs; the removal waits for it, so no driver is left.
    await eventually(() => cluster.read.job(pending)?.state === 'CANCELED', 2_500, 'CANCELED before the launch ended');
    expect(cluster.launched(singleJobDriverId(pending, 1))).toBe(false);
    await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(cluster.read.job(pending)).toMatchObject({ state: 'CANCELED', error: 'cancelled on request' });
    expect(cluster.removed).toContain(singleJobDriverId(pending, 1));
    expect(cluster.alive(singleJobDriverId(pending, 1))).toBe(false);
  });

  it('a job the API recorded: no SUBMITTED write of its own, the API time as submitTime, straight to launch', async () => {
    const id = `job-${Date.now()}-api`;
    const submittedAt = Date.now() - 1_000;
    const input: JobWorkflowInput = { spec, maxRetries: 0, submittedAt };
    // What the API writes before it answers (api/jobs/service.ts).
    await cluster.projectJob(newJobRecord(id, input, submittedAt), SUBMITTED_VERSION);
    const h = await t.env.client.workflow.start<typeof singleJobWorkflow>('singleJobWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: jobWorkflowId(id),
      args: [input],
    });
    expect(await h.executeUpdate(acceptedUpdate)).toEqual({ jobId: id });
    await eventually(() => cluster.launched(singleJobDriverId(id, 1)), 20_000, 'launch');
    cluster.set(singleJobDriverId(id, 1), 'SUCCEEDED');
    const done = await h.result();
    expect(done).toMatchObject({ state: 'FINISHED', submitTime: submittedAt });
    expect(cluster.read.jobStates(id)).toEqual(['SUBMITTED', 'STARTING', 'FINISHED']);
  });

  it('cancelled right after the API started it, while the launch is under way: no driver is left behind', async () => {
    const id = `job-${Date.now()}-cancel-early`;
    const driverId = singleJobDriverId(id, 1);
    cluster.slowLaunch(driverId, 1_500);
    const input: JobWorkflowInput = { spec, maxRetries: 0, submittedAt: Date.now() };
    await cluster.projectJob(newJobRecord(id, input, input.submittedAt!), SUBMITTED_VERSION);
    const h = await t.env.client.workflow.start<typeof singleJobWorkflow>('singleJobWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: jobWorkflowId(id),
      args: [input],
    });
    await h.cancel();
    await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(cluster.read.job(id)).toMatchObject({ state: 'CANCELED', submitTime: input.submittedAt });
    expect(cluster.alive(driverId)).toBe(false);
    // Whatever the launch created (if it had begun) was removed after it.
    if (cluster.launched(driverId)) expect(cluster.removed).toContain(driverId);
  });
});
