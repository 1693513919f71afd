// The group workflow's decisions about its instances (interactive drivers), as pure functions: how many
// to start, which to drain and stop, what a driver status means for an instance's job, when to pause.
import type { DriverSpec, DriverStatus } from './driver';
import { formatTags } from './delimited';
import { instanceDriverId, type InstanceState } from './group';
import { groupTaskQueue, groupWorkflowId } from './ids';
import { GroupState, JobState, JobType } from './states';
import type { Group, Job, SparkSpec } from './types';

/** Drivers the group wants: none while archived, paused on request or auto-paused, otherwise its scale. */
export const desiredScale = (group: Pick<Group, 'state' | 'scale' | 'paused'>, autoPaused: boolean): number =>
  group.state === GroupState.ARCHIVED || group.paused === true || autoPaused ? 0 : group.scale;

/** The job state an instance's record shows while its driver lives. */
export const instanceJobState = (inst: Pick<InstanceState, 'ready' | 'busy'>): JobState =>
  !inst.ready ? JobState.STARTING : inst.busy ? JobState.BUSY : JobState.READY;

/** Drain order: the least useful first, so not yet ready, then idle, then busy (which stop once idle). */
export const drainRank = (i: Pick<InstanceState, 'ready' | 'busy'>): number => (!i.ready ? 0 : i.busy ? 2 : 1);

export interface ReconcilePlan {
  /** New instances to start. */
  start: number;
  /** Instances (jobIds) to mark draining now: outdated, or beyond the desired number. */
  drain: string[];
  /** Draining instances (jobIds) to stop now, in instance order. */
  stop: string[];
}

/**
 * Brings the live instances towards `desired` of the current settings `generation`. Instances of an
 * older generation drain; a surplus drains in {@link drainRank} order; a draining instance stops once
 * idle, but an outdated one keeps serving until a replacement is ready, unless nothing is wanted.
 */
export function planReconcile(instances: readonly InstanceState[], generation: number, desired: number): ReconcilePlan {
  const draining = new Set(instances.filter((i) => i.draining || i.generation < generation).map((i) => i.jobId));
  const active = instances.filter((i) => !draining.has(i.jobId));
  if (active.length > desired) {
    const surplus = [...active].sort((a, b) => drainRank(a) - drainRank(b)).slice(0, active.length - desired);
    for (const i of surplus) draining.add(i.jobId);
  }
  const readyNew = instances.filter((i) => !draining.has(i.jobId) && i.ready).length;
  const keepOutdated = desired > 0 && readyNew === 0;
  const stop = instances.filter(
    (i) => draining.has(i.jobId) && !i.busy && !(i.generation < generation && keepOutdated),
  );
  return {
    start: Math.max(0, desired - active.length),
    drain: instances.filter((i) => !i.draining && draining.has(i.jobId)).map((i) => i.jobId),
    stop: stop.map((i) => i.jobId),
  };
}

/** What a driver status means for an instance: its driver ended (the job fails with `error`), or a patch. */
export type InstanceStatusEffect = { ended: true; error: string } | { ended: false; patch: Partial<Job> };

export function instanceStatusEffect(job: Job, inst: InstanceState, st: DriverStatus): InstanceStatusEffect {
  if (st.phase === 'FAILED' || st.phase === 'MISSING' || st.phase === 'SUCCEEDED') {
    // A runner never ends on its own: even a clean exit means the instance is gone and is replaced.
    return { ended: true, error: st.message ?? `driver ${st.phase === 'MISSING' ? 'disappeared' : 'ended'}` };
  }
  const patch: Partial<Job> = st.appId && st.appId !== job.appId ? { appId: st.appId } : {};
  if (st.phase === 'UNKNOWN') patch.state = JobState.UNKNOWN;
  else if (job.state === JobState.UNKNOWN) patch.state = instanceJobState(inst);
  return { ended: false, patch };
}

export interface IdleView {
  group: Pick<Group, 'autoPause' | 'state'>;
  paused: boolean;
  instances: readonly Pick<InstanceState, 'ready' | 'busy'>[];
  /** Last time anything asked for or did work (epoch ms). */
  lastActivity: number;
  idlePauseMs: number;
}

/** Whether an autoPause group may pause: something could take work, nothing is busy. */
const mayPause = (v: IdleView): boolean =>
  v.group.autoPause && !v.paused && v.group.state !== GroupState.ARCHIVED && v.instances.some((i) => i.ready);

/** An autoPause group pauses (stops its drivers) after idlePauseMs without work. */
export const shouldPause = (v: IdleView, now: number): boolean =>
  mayPause(v) && !v.instances.some((i) => i.busy) && now - v.lastActivity >= v.idlePauseMs;

/** How long until the group should look again whether to pause; undefined when it cannot pause. */
export const pauseCheckIn = (v: IdleView, now: number): number | undefined =>
  mayPause(v) ? Math.max(1, v.idlePauseMs - (now - v.lastActivity)) : undefined;

/** The read-model record of a new instance `n` of the group, STARTING. */
export function newInstanceJob(group: Omit<Group, 'jobs'>, spec: SparkSpec, n: number, now: number): Job {
  return {
    jobId: `${group.id}-${n}`,
    groupId: group.id,
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
    submitTime: now,
    maxRetries: 0,
    attempt: 1,
    memorySettings: group.memorySettings,
  };
}

/** The driver of a group instance: runner/runner.py serving the group's task queue, of the group's kind and language. */
export function runnerDriverSpec(group: Omit<Group, 'jobs'>, spec: SparkSpec, jobId: string): DriverSpec {
  const { id: groupId, name, kind, language } = group;
  return {
    driverId: instanceDriverId(jobId),
    role: 'runner',
    spark: { ...spec, name: `${name}-${jobId}` },
    env: {
      RUNNER_TASK_QUEUE: groupTaskQueue(groupId),
      RUNNER_GROUP_WORKFLOW_ID: groupWorkflowId(groupId),
      RUNNER_INSTANCE_ID: jobId,
      RUNNER_GROUP_KIND: kind,
      RUNNER_LANGUAGE: language,
    },
    labels: { groupId, jobId },
  };
}
