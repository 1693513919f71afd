// Group workflow `group/<groupId>`: an entity workflow that keeps `scale` interactive drivers (instances)
// alive. Each instance is a Spark driver running runner/runner.py, polling the group's task queue, and an
// INTERACTIVE job in the read model.
//
//   instance:  STARTING ──(runner signals instanceReady)──▶ READY ⇄ BUSY (instanceState signals)
//                 │                                          │
//                 └──────── driver died ──▶ FAILED (replaced) ┘── scale down / update / pause / archive ──▶ FINISHED
//   group:     ACTIVE ──archive──▶ ARCHIVED (all instances stopped, then the workflow ends)
//
// Handlers only change state and wake the loop; the loop alone calls activities, so no handler needs a
// mutex. Updates return once the group record shows their effect (read-your-writes).
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  isCancellation,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { DriverStatus } from '../domain/driver';
import { formatTags } from '../domain/delimited';
import { instanceDriverId, type GroupResume, type GroupSettingsPatch, type GroupWorkflowInput, type InstanceState } from '../domain/group';
import { groupTaskQueue, groupWorkflowId } from '../domain/ids';
import { GroupState, isTerminal, JobState, JobType } from '../domain/states';
import { mergeArtifacts } from '../domain/artifacts';
import type { Job } from '../domain/types';
import { drivers, projection, watch } from './activities';
import { setSearch } from './search';

export const acceptedGroupUpdate = defineUpdate<{ groupId: string }>('accepted');
export const rescaleUpdate = defineUpdate<void, [number]>('rescale');
export const updateGroupUpdate = defineUpdate<void, [GroupSettingsPatch]>('update');
export const archiveUpdate = defineUpdate<void>('archive');
/** Sent before an execution when the group may have paused its drivers (autoPause). */
export const wakeSignal = defineSignal('wake');
/** Sent by a runner once it polls the group's task queue. */
export const instanceReadySignal = defineSignal<[{ instanceId: string; appId?: string }]>('instanceReady');
/** Sent by a runner around each execution. */
export const instanceStateSignal = defineSignal<[{ instanceId: string; state: 'BUSY' | 'READY' }]>('instanceState');
export const groupQuery = defineQuery<{ paused: boolean; generation: number; instances: Job[] }>('group');

const { projectGroup, projectJob } = projection;

/** Spark settings whose change needs new drivers. */
const RESTART_FIELDS: (keyof GroupSettingsPatch)[] = ['jobConfig', 'pyRequirements', 'packages', 'memorySettings', 'addArtifacts'];

export async function groupWorkflow(input: GroupWorkflowInput): Promise<void> {
  const group = { ...input.group };
  const spec = { ...input.spec };
  const groupId = group.id;
  const r: GroupResume = input.resume ?? { seq: 0, nextInstance: 1, generation: 1, paused: false, lastActivity: Date.now(), instances: [], jobs: {} };
  let { seq, nextInstance, generation, paused, lastActivity } = r;
  const instances = new Map<string, InstanceState>(r.instances.map((i) => [i.jobId, i]));
  const jobs = new Map<string, Job>(Object.entries(r.jobs));
  const status = new Map<string, DriverStatus>();
  const watchers = new Map<string, CancellationScope>();
  const dirtyJobs = new Set<string>();
  const events: { jobId: string; st: DriverStatus }[] = [];
  let groupDirty = input.resume === undefined;
  let projectedOnce = input.resume !== undefined;
  let tick = 0;
  let pendingRemovals = 0;
  const wake = () => void (tick += 1);

  const markJob = (jobId: string, patch: Partial<Job>) => {
    const job = jobs.get(jobId);
    if (!job) return;
    Object.assign(job, patch);
    dirtyJobs.add(jobId);
    wake();
  };
  const archived = () => group.state === GroupState.ARCHIVED;
  /** Waits until the loop has written the group record with this handler's change. */
  const groupWritten = async () => {
    groupDirty = true;
    wake();
    await condition(() => !groupDirty);
  };

  setHandler(groupQuery, () => ({ paused, generation, instances: [...jobs.values()] }));
  setHandler(acceptedGroupUpdate, async () => {
    await condition(() => projectedOnce);
    return { groupId };
  });
  setHandler(
    rescaleUpdate,
    async (scale) => {
      group.scale = scale;
      lastActivity = Date.now();
      paused = false;
      await groupWritten();
    },
    { validator: (scale) => checkScale(scale) },
  );
  setHandler(
    updateGroupUpdate,
    async (patch) => {
      if (patch.description !== undefined) group.description = patch.description;
      if (patch.tags !== undefined) {
        group.tags = formatTags(patch.tags);
        spec.tags = patch.tags;
      }
      if (patch.jobConfig !== undefined) {
        group.jobConfig = patch.jobConfig;
        spec.jobConfig = patch.jobConfig;
      }
      if (patch.pyRequirements !== undefined) {
        group.pyRequirements = patch.pyRequirements.join(';');
        spec.pyRequirements = patch.pyRequirements;
      }
      if (patch.packages !== undefined) {
        group.packages = patch.packages.join(',');
        spec.packages = patch.packages;
      }
      if (patch.memorySettings !== undefined) {
        group.memorySettings = patch.memorySettings;
        spec.memorySettings = patch.memorySettings;
      }
      if (patch.addArtifacts !== undefined) spec.artifacts = mergeArtifacts(spec.artifacts, patch.addArtifacts);
      if (patch.autoPause !== undefined) group.autoPause = patch.autoPause;
      if (patch.scale !== undefined) group.scale = patch.scale;
      if (RESTART_FIELDS.some((f) => patch[f] !== undefined)) generation += 1;
      lastActivity = Date.now();
      await groupWritten();
    },
    {
      validator: (patch) => {
        if (archived()) throw new Error(`group '${group.name}' is archived`);
        if (patch.scale !== undefined) checkScale(patch.scale);
      },
    },
  );
  setHandler(
    archiveUpdate,
    async () => {
      group.state = GroupState.ARCHIVED;
      group.archivedTime = Date.now();
      await groupWritten();
    },
    {
      validator: () => {
        if (archived()) throw new Error(`group '${group.name}' is already archived`);
      },
    },
  );
  setHandler(wakeSignal, () => {
    lastActivity = Date.now();
    if (paused) {
      paused = false;
      log.info('waking paused group', { groupId });
    }
    wake();
  });
  setHandler(instanceReadySignal, ({ instanceId, appId }) => {
    const inst = instances.get(instanceId);
    if (!inst) return;
    inst.ready = true;
    // The idle clock of autoPause starts when a driver can take work, not while drivers start.
    lastActivity = Date.now();
    markJob(instanceId, { state: inst.busy ? JobState.BUSY : JobState.READY, ...(appId ? { appId } : {}), startTime: jobs.get(instanceId)?.startTime ?? Date.now() });
  });
  setHandler(instanceStateSignal, ({ instanceId, state }) => {
    const inst = instances.get(instanceId);
    lastActivity = Date.now();
    if (!inst) return;
    inst.busy = state === 'BUSY';
    if (inst.ready) markJob(instanceId, { state: inst.busy ? JobState.BUSY : JobState.READY });
    else wake();
  });

  function checkScale(scale: number) {
    if (archived()) throw new Error(`group '${group.name}' is archived`);
    if (!Number.isInteger(scale) || scale < 0 || scale > input.maxScale) throw new Error(`scale must be a whole number from 0 to ${input.maxScale}`);
  }

  // ---- instances ----------------------------------------------------------------------------------
  const launch = (jobId: string) => {
    const run = drivers.launchDriver(group.clusterName, {
      driverId: instanceDriverId(jobId),
      role: 'runner',
      spark: { ...spec, name: `${group.name}-${jobId}` },
      env: {
        RUNNER_TASK_QUEUE: groupTaskQueue(groupId),
        RUNNER_GROUP_WORKFLOW_ID: groupWorkflowId(groupId),
        RUNNER_INSTANCE_ID: jobId,
        RUNNER_GROUP_KIND: group.kind,
        RUNNER_LANGUAGE: group.language,
      },
      labels: { groupId, jobId },
    });
    void run.then(
      (st) => events.push({ jobId, st }),
      (err: unknown) => events.push({ jobId, st: { phase: 'FAILED', message: `launch failed: ${messageOf(err)}` } }),
    ).finally(wake);
  };

  const startInstance = () => {
    const n = nextInstance++;
    const jobId = `${groupId}-${n}`;
    instances.set(jobId, { jobId, generation, ready: false, busy: false, draining: false });
    jobs.set(jobId, {
      jobId,
      groupId,
      jobName: `${group.name}-${n}`,
      jobType: JobType.INTERACTIVE,
      tags: group.tags,
      language: group.language,
      clusterName: group.clusterName,
      jobConfig: formatTags(spec.jobConfig),
      args: [],
      pyRequirements: group.pyRequirements,
      packages: group.packages,
      state: JobState.STARTING,
      submitTime: Date.now(),
      maxRetries: 0,
      attempt: 1,
      memorySettings: group.memorySettings,
    });
    dirtyJobs.add(jobId);
    launch(jobId);
  };

  /** Ends an instance: its job gets `state`, its driver is removed in the background. */
  const endInstance = (jobId: string, state: JobState, error?: string) => {
    instances.delete(jobId);
    watchers.get(jobId)?.cancel();
    watchers.delete(jobId);
    status.delete(jobId);
    markJob(jobId, { state, endTime: Date.now(), ...(error ? { error } : {}) });
    pendingRemovals += 1;
    void drivers
      .removeDriver(group.clusterName, instanceDriverId(jobId))
      .catch((err: unknown) => log.warn('driver removal failed', { jobId, error: messageOf(err) }))
      .finally(() => {
        pendingRemovals -= 1;
        wake();
      });
  };

  const startWatch = (jobId: string, known: DriverStatus) => {
    const scope = new CancellationScope();
    watchers.set(jobId, scope);
    void scope
      .run(() => watch.watchDriver(group.clusterName, instanceDriverId(jobId), known))
      .then(
        (st) => events.push({ jobId, st }),
        (err: unknown) => {
          if (!isCancellation(err)) events.push({ jobId, st: { phase: 'UNKNOWN', message: messageOf(err) } });
        },
      )
      .finally(() => {
        if (watchers.get(jobId) === scope) watchers.delete(jobId);
        wake();
      });
  };

  const onStatus = (jobId: string, st: DriverStatus) => {
    if (!instances.has(jobId)) return;
    status.set(jobId, st);
    const job = jobs.get(jobId)!;
    const inst = instances.get(jobId)!;
    if (st.phase === 'FAILED' || st.phase === 'MISSING' || st.phase === 'SUCCEEDED') {
      // The driver died: the job records why, and reconcile() starts a replacement.
      return endInstance(jobId, JobState.FAILED, st.message ?? `driver ${st.phase === 'MISSING' ? 'disappeared' : 'ended'}`);
    }
    if (st.appId && st.appId !== job.appId) markJob(jobId, { appId: st.appId });
    if (st.phase === 'UNKNOWN') markJob(jobId, { state: JobState.UNKNOWN });
    else if (job.state === JobState.UNKNOWN) markJob(jobId, { state: inst.ready ? (inst.busy ? JobState.BUSY : JobState.READY) : JobState.STARTING });
  };

  const reconcile = () => {
    const desired = archived() || paused ? 0 : group.scale;
    for (const inst of instances.values()) if (inst.generation < generation) inst.draining = true;
    const active = [...instances.values()].filter((i) => !i.draining);
    for (let i = active.length; i < desired; i++) startInstance();
    if (active.length > desired) {
      // Stop the least useful first: not yet ready, then idle, then busy (which stop once idle).
      const order = [...active].sort((a, b) => rank(a) - rank(b));
      for (const inst of order.slice(0, active.length - desired)) inst.draining = true;
    }
    const readyNew = [...instances.values()].filter((i) => !i.draining && i.ready).length;
    for (const inst of [...instances.values()]) {
      if (!inst.draining || inst.busy) continue;
      // An outdated instance keeps serving until a replacement is ready, unless nothing is wanted.
      const outdated = inst.generation < generation && desired > 0;
      if (outdated && readyNew === 0) continue;
      endInstance(inst.jobId, JobState.FINISHED);
    }
    for (const inst of instances.values()) {
      const st = status.get(inst.jobId);
      if (st && !watchers.has(inst.jobId)) startWatch(inst.jobId, st);
    }
  };
  const rank = (i: InstanceState) => (!i.ready ? 0 : i.busy ? 2 : 1);

  // ---- main loop ----------------------------------------------------------------------------------
  if (input.resume) {
    // Launch is idempotent: asking again yields each live driver's status, and watching resumes.
    for (const jobId of instances.keys()) launch(jobId);
  } else {
    setSearch({ groupId, clusterName: group.clusterName, jobType: JobType.INTERACTIVE });
  }

  for (;;) {
    while (events.length) {
      const e = events.shift()!;
      onStatus(e.jobId, e.st);
    }
    const idleFor = Date.now() - lastActivity;
    const anyBusy = [...instances.values()].some((i) => i.busy);
    const anyReady = [...instances.values()].some((i) => i.ready);
    if (group.autoPause && !paused && !archived() && !anyBusy && anyReady && idleFor >= input.idlePauseMs) {
      paused = true;
      log.info('pausing idle group', { groupId, idleFor });
    }
    reconcile();

    // Write what changed: instance jobs first, then the group (whose write releases waiting updates).
    const writes = [...dirtyJobs].map((jobId) => ({ jobId, job: { ...jobs.get(jobId)! }, v: ++seq }));
    dirtyJobs.clear();
    const groupWrite = groupDirty ? { g: { ...group }, v: ++seq } : undefined;
    await Promise.all(writes.map((w) => projectJob(w.job, w.v)));
    if (groupWrite) {
      await projectGroup(groupWrite.g, groupWrite.v);
      projectedOnce = true;
      if (JSON.stringify(groupWrite.g) === JSON.stringify(group)) groupDirty = false;
    }
    for (const w of writes) if (isTerminal(w.job.state)) jobs.delete(w.jobId);

    if (archived() && instances.size === 0 && pendingRemovals === 0 && !groupDirty && dirtyJobs.size === 0) {
      await condition(allHandlersFinished);
      return;
    }
    if (workflowInfo().continueAsNewSuggested && pendingRemovals === 0 && !groupDirty && dirtyJobs.size === 0) {
      for (const scope of watchers.values()) scope.cancel();
      await condition(allHandlersFinished);
      await continueAsNew<typeof groupWorkflow>({
        ...input,
        group,
        spec,
        resume: { seq, nextInstance, generation, paused, lastActivity, instances: [...instances.values()], jobs: Object.fromEntries(jobs) },
      });
    }
    const seen = tick;
    const pauseIn = group.autoPause && !paused && !archived() && anyReady ? Math.max(1, input.idlePauseMs - (Date.now() - lastActivity)) : undefined;
    const woken = () => tick !== seen || events.length > 0 || dirtyJobs.size > 0 || groupDirty;
    if (pauseIn === undefined) await condition(woken);
    else await condition(woken, pauseIn);
  }
}

function messageOf(err: unknown): string {
  const cause = (err as { cause?: { message?: string } }).cause;
  return cause?.message ?? (err instanceof Error ? err.message : String(err));
}
