// Starting a group workflow and playing its runners (which signal instanceReady / instanceState) in tests.
import type { WorkflowHandle } from '@temporalio/client';
import type { GroupWorkflowInput } from '../../domain/group';
import { instanceDriverId } from '../../domain/group';
import { groupWorkflowId } from '../../domain/ids';
import { isTerminal } from '../../domain/states';
import type { Group, Job } from '../../domain/types';
import { instanceReadySignal, instanceStateSignal, type groupWorkflow } from '../../workflows/group';
import type { fakeCluster } from './fake-activities';
import { eventually, TASK_QUEUE, type WorkflowTestEnv } from './workflow-env';
import { sparkSpec } from '../../testkit/spark-spec';

export type GroupHandle = WorkflowHandle<typeof groupWorkflow>;

let n = 0;

export function groupRecord(id: string, over: Partial<Omit<Group, 'jobs'>> = {}): Omit<Group, 'jobs'> {
  return {
    id,
    name: `g-${id}`,
    description: '',
    kind: 'CODE',
    tags: '',
    language: 'PYTHON',
    clusterName: 'local',
    state: 'ACTIVE',
    scale: 1,
    jobConfig: {},
    pyRequirements: '',
    packages: '',
    createdTime: Date.now(),
    memorySettings: { dynamicAllocation: false },
    autoPause: false,
    ...over,
  };
}

/** A group workflow and what its fake cluster and read model show of it. */
export function groupTools(t: () => WorkflowTestEnv, cluster: ReturnType<typeof fakeCluster>) {
  const jobs = (gid: string): Job[] =>
    cluster.read.jobsOf(gid).sort((a, b) => a.submitTime - b.submitTime || a.jobId.localeCompare(b.jobId));
  const live = (gid: string) => jobs(gid).filter((j) => !isTerminal(j.state));
  return {
    async start(
      over: Partial<Omit<Group, 'jobs'>> = {},
      opts: Partial<GroupWorkflowInput> = {},
    ): Promise<{ id: string; h: GroupHandle }> {
      const id = `grp${Date.now()}x${++n}`;
      const input: GroupWorkflowInput = {
        group: groupRecord(id, over),
        spec: sparkSpec({ name: `g-${id}` }),
        idlePauseMs: 60_000,
        maxScale: 4,
        ...opts,
      };
      const h = await t().env.client.workflow.start<typeof groupWorkflow>('groupWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: groupWorkflowId(id),
        args: [input],
      });
      return { id, h };
    },
    jobs,
    live,
    state: (jobId: string) => cluster.read.job(jobId)?.state,
    /** Waits until exactly these instance jobIds are live and their drivers launched. */
    async liveAre(gid: string, ids: string[]): Promise<void> {
      await eventually(
        () => {
          const l = live(gid).map((j) => j.jobId);
          return JSON.stringify(l) === JSON.stringify(ids) && ids.every((i) => cluster.launched(instanceDriverId(i)));
        },
        20_000,
        `live instances ${ids.join(', ')} (now ${live(gid)
          .map((j) => `${j.jobId}:${j.state}`)
          .join(', ')})`,
      );
    },
    /** Plays the runner of each instance: signals that it polls, and waits for READY. */
    async ready(h: GroupHandle, ...ids: string[]): Promise<void> {
      for (const id of ids) await h.signal(instanceReadySignal, { instanceId: id, appId: `app-${id}` });
      await eventually(
        () => ids.every((id) => cluster.read.job(id)?.state === 'READY'),
        20_000,
        `${ids.join(', ')} READY`,
      );
    },
    async busy(h: GroupHandle, id: string, busy: boolean): Promise<void> {
      await h.signal(instanceStateSignal, { instanceId: id, state: busy ? 'BUSY' : 'READY' });
      await eventually(
        () => cluster.read.job(id)?.state === (busy ? 'BUSY' : 'READY'),
        20_000,
        `${id} ${busy ? 'BUSY' : 'READY'}`,
      );
    },
  };
}
