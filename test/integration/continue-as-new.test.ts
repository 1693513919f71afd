// Continue-as-new of the long-lived workflows, on a dev server that suggests it after a few dozen
// events: the next run carries the state on (instances, numbering, watches; the current try).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDriverId } from '../../domain/group';
import { jobWorkflowId } from '../../domain/ids';
import { singleJobDriverId } from '../../domain/job';
import { groupQuery, rescaleUpdate } from '../../workflows/group';
import type { singleJobWorkflow } from '../../workflows/job';
import { fakeCluster } from './fake-activities';
import { groupTools } from './group-fixture';
import { eventually, startWorkflowEnv, TASK_QUEUE, type WorkflowTestEnv } from './workflow-env';
import { sparkSpec } from '../../testkit/spark-spec';

const cluster = fakeCluster({ phase: 'RUNNING' });
let t: WorkflowTestEnv;
const g = groupTools(() => t, cluster);

beforeAll(async () => {
  t = await startWorkflowEnv(cluster.activities, { suggestContinueAsNewAfter: 60 });
});
afterAll(async () => t?.stop());

const runsOf = async (workflowId: string) => {
  const d = await t.env.client.workflow.getHandle(workflowId).describe();
  return { runId: d.runId, first: d.raw.workflowExecutionInfo?.firstRunId ?? undefined };
};

describe('continue-as-new', () => {
  it('a group continues as new with its instances, their numbering and their watches', async () => {
    const { id, h } = await g.start({ scale: 2 });
    await g.liveAre(id, [`${id}-1`, `${id}-2`]);
    await g.ready(h, `${id}-1`, `${id}-2`);
    const before = await runsOf(h.workflowId);
    for (let i = 0; i < 12 && (await runsOf(h.workflowId)).runId === before.runId; i++) {
      await g.busy(h, `${id}-1`, true);
      await g.busy(h, `${id}-1`, false);
    }
    const after = await runsOf(h.workflowId);
    expect(after.runId).not.toBe(before.runId);
    expect(after.first).toBe(before.runId);

    const q = await h.query(groupQuery);
    expect(q.instances.map((j) => [j.jobId, j.state])).toEqual([
      [`${id}-1`, 'READY'],
      [`${id}-2`, 'READY'],
    ]);
    expect(cluster.removed.filter((d) => d.startsWith(instanceDriverId(id)))).toEqual([]);
    // Numbering goes on, and the new run watches the drivers it took over.
    await h.executeUpdate(rescaleUpdate, { args: [3] });
    await g.liveAre(id, [`${id}-1`, `${id}-2`, `${id}-3`]);
    cluster.set(instanceDriverId(`${id}-2`), 'FAILED', { message: 'lost' });
    await g.liveAre(id, [`${id}-1`, `${id}-3`, `${id}-4`]);
    expect(cluster.read.job(`${id}-2`)).toMatchObject({ state: 'FAILED', error: 'lost' });
  });

  it('a job continues as new mid-watch and its try goes on', async () => {
    const id = `can-${Date.now()}`;
    const driver = singleJobDriverId(id, 1);
    const h = await t.env.client.workflow.start<typeof singleJobWorkflow>('singleJobWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: jobWorkflowId(id),
      args: [
        {
          spec: sparkSpec({ name: 'x' }),
          maxRetries: 0,
        },
      ],
    });
    const before = await runsOf(h.workflowId);
    for (let i = 0; i < 20 && (await runsOf(h.workflowId)).runId === before.runId; i++) {
      const phase = i % 2 === 0 ? 'UNKNOWN' : 'RUNNING';
      cluster.set(driver, phase);
      await eventually(() => cluster.read.job(id)?.state === (phase === 'UNKNOWN' ? 'UNKNOWN' : 'BUSY'), 20_000, phase);
    }
    expect((await runsOf(h.workflowId)).runId).not.toBe(before.runId);
    cluster.set(driver, 'SUCCEEDED');
    expect(await h.result()).toMatchObject({ state: 'FINISHED', attempt: 1 });
    expect(new Set(cluster.launches.filter((l) => l.driverId.includes(id)).map((l) => l.driverId))).toEqual(
      new Set([driver]),
    );
  });
});
