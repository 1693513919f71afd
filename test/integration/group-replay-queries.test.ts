// A group hammered by queries while its drivers die, its runners signal and history asks it to continue as new:
// every run it leaves must replay under the same code (what a worker does after a restart, a cache eviction or a
// rejected workflow task). Found in CI: a query that reached a workflow task which also ran local activities made
// Core answer the query and finish the task before the local activities' results reached the workflow; they came
// in the next task, while a replay hands them over at once. A workflow that decides anything right after such a
// result (the group did: continue as new, cancelling its watches) then decides it in different tasks live and on
// replay, and the replay broke with "ActivityMachine in state ScheduledActivityCancelCommandCreated says the
// transition is invalid during event ActivityTaskScheduled"; the group answered no update after that.
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { instanceDriverId } from '../../domain/group';
import { directEndpointsQuery, groupQuery, instanceReadySignal, instanceStateSignal } from '../../workflows/group';
import { fakeCluster } from './fake-activities';
import { groupTools } from './group-fixture';
import { sleep } from '../../testkit/wait';
import { eventually, startWorkflowEnv, type WorkflowTestEnv } from './workflow-env';

const cluster = fakeCluster({ phase: 'RUNNING' });
let t: WorkflowTestEnv;
const g = groupTools(() => t, cluster);
const QUERY_LOOPS = 6;
const ROUNDS = 8;

beforeAll(async () => {
  // Writes that take a few milliseconds, as MongoDB's do under load: the window in which a query lands.
  const slow =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A) => {
      await sleep(15);
      return f(...a);
    };
  const a = cluster.activities;
  t = await startWorkflowEnv({ ...a, projectGroupStep: slow(a.projectGroupStep) }, { suggestContinueAsNewAfter: 60 });
});
afterAll(async () => t?.stop());

describe('a group queried while it works', () => {
  it('leaves runs that all replay, and keeps answering updates', async () => {
    const { id, h } = await g.start({ scale: 2 });
    // Queries all the time, as the API's direct executions and an operator's Temporal UI make them.
    let querying = true;
    const queryLoop = async () => {
      let n = 0;
      for (; querying; n++) await Promise.all([h.query(directEndpointsQuery), h.query(groupQuery)]);
      return n;
    };
    const queries = Promise.all(Array.from({ length: QUERY_LOOPS }, queryLoop));
    let next = 3;
    let live = [`${id}-1`, `${id}-2`];
    await g.liveAre(id, live);
    await g.ready(h, ...live);
    for (let round = 0; round < ROUNDS; round++) {
      // A runner works (BUSY, READY), and a driver dies: its instance is replaced by the next number.
      for (const inst of live) await h.signal(instanceStateSignal, { instanceId: inst, state: 'BUSY' });
      for (const inst of live) await h.signal(instanceStateSignal, { instanceId: inst, state: 'READY' });
      const dead = live[round % 2]!;
      cluster.set(instanceDriverId(dead), 'FAILED', { message: 'lost' });
      const successor = `${id}-${next++}`;
      live = live
        .map((i) => (i === dead ? successor : i))
        .sort((x, y) => Number(x.split('-')[1]) - Number(y.split('-')[1]));
      await g.liveAre(id, live);
      await h.signal(instanceReadySignal, { instanceId: successor, appId: `app-${successor}` });
      await eventually(() => cluster.read.job(successor)?.state === 'READY', 20_000, `${successor} READY`);
    }
    querying = false;
    expect((await queries).reduce((a, b) => a + b)).toBeGreaterThan(0);

    // Still answering updates, and every run of it (continued as new several times) replays.
    await h.executeUpdate('rescale', { args: [1] });
    const runs: string[] = [];
    for await (const w of t.env.client.workflow.list({ query: `WorkflowId = '${h.workflowId}'` })) runs.push(w.runId);
    expect(runs.length).toBeGreaterThan(2);
    for (const runId of runs) {
      const history = await t.env.client.workflow.getHandle(h.workflowId, runId).fetchHistory();
      // A task refused because a signal came meanwhile (UnhandledCommand) is normal; a broken one is not.
      const broken = history
        .events!.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message ?? '')
        .filter((m) => /fatal|nondetermin/i.test(m));
      expect(broken).toEqual([]);
      // The mechanism itself: the group runs no local activity (their markers), so no query can split a task.
      expect(history.events!.filter((e) => e.markerRecordedEventAttributes)).toEqual([]);
      await Worker.runReplayHistory({ workflowBundle: { codePath: inject('bundlePath') } }, history, runId);
    }
  });
});
