// The schedule keeper workflow on a real Temporal dev server with replaced activities: it keeps the
// Temporal Schedule and the read model in step, one change at a time, disables itself at its endTime,
// and ends when the schedule is deleted or Temporal refuses it at creation.
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleKeeperWorkflowId } from '../../domain/ids';
import type { ScheduleWorkflowInput } from '../../domain/schedule';
import type { Schedule } from '../../domain/types';
import {
  acceptedScheduleUpdate,
  deleteScheduleUpdate,
  disableScheduleUpdate,
  pauseScheduleUpdate,
  resumeScheduleUpdate,
  scheduleQuery,
  updateScheduleUpdate,
  type scheduleWorkflow,
} from '../../workflows/schedule';
import { fakeTemporalSchedules, readModel } from './fake-activities';
import { eventually, startWorkflowEnv, TASK_QUEUE, type WorkflowTestEnv } from './workflow-env';
import { sparkSpec } from '../../testkit/spark-spec';

const read = readModel();
const temporal = fakeTemporalSchedules();
let t: WorkflowTestEnv;

beforeAll(async () => {
  t = await startWorkflowEnv({ ...read.activities, ...temporal.activities });
});
afterAll(async () => t?.stop());

let n = 0;
async function start(
  over: Partial<Omit<Schedule, 'jobs'>> = {},
): Promise<{ id: string; h: WorkflowHandle<typeof scheduleWorkflow> }> {
  const id = `sch${Date.now()}x${++n}`;
  const input: ScheduleWorkflowInput = {
    schedule: {
      id,
      name: `s-${id}`,
      description: '',
      cron: '0 2 * * *',
      tags: '',
      language: 'PYTHON',
      clusterName: 'local',
      jobConfig: {},
      pyRequirements: '',
      packages: '',
      state: 'ENABLED',
      jobClass: 'main.py',
      args: [],
      maxRetries: 0,
      createdTime: Date.now(),
      memorySettings: { dynamicAllocation: false },
      ...over,
    },
    spec: sparkSpec({ name: `s-${id}`, jobClass: 'main.py' }),
    taskQueue: 'jobs',
  };
  const h = await t.env.client.workflow.start<typeof scheduleWorkflow>('scheduleWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: scheduleKeeperWorkflowId(id),
    args: [input],
  });
  return { id, h };
}

/** The message a client gets when an update is refused. */
async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { message: string; cause?: { message: string } },
  );
  if (!err) throw new Error('the update was accepted');
  return err.cause?.message ?? err.message;
}

describe('schedule keeper workflow', () => {
  it('creates the Temporal Schedule and the record, and moves between ENABLED, PAUSED and DISABLED', async () => {
    const { id, h } = await start();
    expect(await h.executeUpdate(acceptedScheduleUpdate)).toEqual({ scheduleId: id });
    expect(temporal.appliedTo(id)).toEqual([
      expect.objectContaining({ cron: '0 2 * * *', paused: false, note: '', taskQueue: 'jobs' }),
    ]);
    expect(read.schedule(id)?.state).toBe('ENABLED');

    await h.executeUpdate(pauseScheduleUpdate);
    expect(read.schedule(id)?.state).toBe('PAUSED');
    expect(temporal.appliedTo(id).at(-1)).toMatchObject({ paused: true, note: 'PAUSED' });
    expect(await refusal(h.executeUpdate(pauseScheduleUpdate))).toContain('is PAUSED, not ENABLED');

    await h.executeUpdate(disableScheduleUpdate);
    expect(read.schedule(id)).toMatchObject({ state: 'DISABLED' });
    expect(read.schedule(id)?.disabledTime).toBeGreaterThan(0);
    expect(await refusal(h.executeUpdate(disableScheduleUpdate))).toContain('already DISABLED');

    await h.executeUpdate(resumeScheduleUpdate);
    expect(read.schedule(id)?.state).toBe('ENABLED');
    expect(read.schedule(id)?.disabledTime).toBeUndefined();
    expect(temporal.appliedTo(id).at(-1)).toMatchObject({ paused: false, note: '' });
    expect((await h.query(scheduleQuery)).state).toBe('ENABLED');
  });

  it('applies concurrent updates one at a time, each to Temporal and then to the record', async () => {
    const { id, h } = await start();
    await h.executeUpdate(acceptedScheduleUpdate);
    temporal.slowApply(300);
    try {
      await Promise.all([
        h.executeUpdate(updateScheduleUpdate, { args: [{ description: 'nightly load' }] }),
        h.executeUpdate(updateScheduleUpdate, { args: [{ cron: '*/5 * * * *' }] }),
        h.executeUpdate(updateScheduleUpdate, { args: [{ args: ['--full'], pyRequirements: ['numpy'] }] }),
      ]);
    } finally {
      temporal.slowApply(0);
    }
    expect(temporal.maxInFlight()).toBe(1);
    expect(read.schedule(id)).toMatchObject({
      description: 'nightly load',
      cron: '*/5 * * * *',
      args: ['--full'],
      pyRequirements: 'numpy',
    });
    expect(temporal.appliedTo(id).at(-1)).toMatchObject({
      cron: '*/5 * * * *',
      spec: expect.objectContaining({ args: ['--full'], pyRequirements: ['numpy'] }),
    });
  });

  it('disables itself at its endTime; it resumes only once endTime is moved', async () => {
    const { id, h } = await start({ endTime: Date.now() + 1_000 });
    await h.executeUpdate(acceptedScheduleUpdate);
    await eventually(() => read.schedule(id)?.state === 'DISABLED', 15_000, 'DISABLED at endTime');
    expect(temporal.appliedTo(id).at(-1)).toMatchObject({ paused: true, note: 'DISABLED' });
    expect(await refusal(h.executeUpdate(resumeScheduleUpdate))).toContain('ended at its endTime');

    await h.executeUpdate(updateScheduleUpdate, { args: [{ endTime: Date.now() + 3_600_000 }] });
    await h.executeUpdate(resumeScheduleUpdate);
    expect(read.schedule(id)?.state).toBe('ENABLED');
  });

  it('a schedule Temporal refuses at creation fails its create request and leaves nothing behind', async () => {
    temporal.refuse("invalid cron 'nope'");
    const { id, h } = await start({ cron: 'nope' });
    expect(await refusal(h.executeUpdate(acceptedScheduleUpdate))).toBe("invalid cron 'nope'");
    await h.result();
    expect(temporal.deleted).toContain(id);
    expect(read.schedule(id)).toBeUndefined();
  });

  it('delete removes the Temporal Schedule and the record, then the workflow ends', async () => {
    const { id, h } = await start();
    await h.executeUpdate(acceptedScheduleUpdate);
    await h.executeUpdate(deleteScheduleUpdate);
    expect(temporal.deleted).toContain(id);
    expect(temporal.deletedRecords).toContain(id);
    await h.result();
  });
});
