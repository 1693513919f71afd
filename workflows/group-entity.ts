// The state of one group workflow and what its messages and its loop do to it. Handlers change state
// synchronously and then wait for the loop to write it (read-your-writes); the loop alone calls
// activities. So no handler awaits and then mutates, and none needs a mutex.
//
// Over 300 lines on purpose: the handlers and the loop share this one state and its invariant above, which
// is checked by reading them together. The rules they apply are pure functions elsewhere: reconcile and
// drain (domain/group-instances.ts), crash-loop backoff (domain/broken-clusters/crash-loops.ts), settings patches
// (domain/group-settings.ts).
import { condition, log } from '@temporalio/workflow';
import {
  afterFailure,
  crashLoopError,
  crashLooping,
  DEFAULT_CRASH_LOOP,
  nextStartAt,
  noCrashLoop,
  type CrashLoop,
} from '../domain/broken-clusters/crash-loops';
import type { DriverStatus } from '../domain/driver';
import {
  instanceDriverId,
  newGroupResume,
  type DirectEndpoint,
  type GroupResume,
  type GroupSummary,
  type GroupSettingsPatch,
  type GroupWorkflowInput,
  type InstanceState,
} from '../domain/group';
import {
  desiredScale,
  instanceJobState,
  instanceStatusEffect,
  newInstanceJob,
  pauseCheckIn,
  runnerDriverSpec,
  planReconcile,
  shouldPause,
  type IdleView,
} from '../domain/group-instances';
import { applyGroupPatch, archivedGroup } from '../domain/group-settings';
import { withReachability, type Unreachable } from '../domain/job-transitions';
import { GroupState, isTerminal, JobState, JobType } from '../domain/states';
import type { Job } from '../domain/types';
import { entityProjection } from './activity-options';
import { InstanceDrivers } from './group-drivers';
import { setSearch } from './search';
import { WriteVersions } from './versions';

export class GroupEntity {
  group: GroupWorkflowInput['group'];
  private spec: GroupWorkflowInput['spec'];
  private readonly versions: WriteVersions;
  private nextInstance: number;
  private generation: number;
  private paused: boolean;
  private lastActivity: number;
  private readonly instances: Map<string, InstanceState>;
  /** Records of live instances, and of ended ones until their last write. */
  private readonly jobs: Map<string, Job>;
  private readonly status = new Map<string, DriverStatus>();
  private readonly dirtyJobs = new Set<string>();
  private groupDirty: boolean;
  private projectedOnce: boolean;
  private tick = 0;
  /** `tick` when step() last ended: a change after it (during the write, say) is one the loop has not seen. */
  private steppedAt = 0;
  private readonly drivers: InstanceDrivers;
  /** Instances whose cluster does not answer: since when, and the error they showed before. */
  private readonly unreachable = new Map<string, Unreachable>();
  private crash: CrashLoop;

  constructor(private readonly input: GroupWorkflowInput) {
    this.group = { ...input.group };
    this.spec = { ...input.spec };
    const r: GroupResume = input.resume ?? newGroupResume(Date.now());
    ({
      nextInstance: this.nextInstance,
      generation: this.generation,
      paused: this.paused,
      lastActivity: this.lastActivity,
    } = r);
    this.versions = new WriteVersions(r.seq);
    this.instances = new Map(r.instances.map((i) => [i.jobId, { ...i }]));
    this.jobs = new Map(Object.entries(r.jobs));
    this.crash = r.crash ?? noCrashLoop();
    this.groupDirty = input.resume === undefined;
    this.projectedOnce = input.resume !== undefined;
    this.drivers = new InstanceDrivers(this.group.clusterName, () => this.wakeLoop());
  }

  // ---- messages -----------------------------------------------------------------------------------
  summary(): GroupSummary {
    return { paused: this.paused, generation: this.generation, instances: [...this.jobs.values()] };
  }

  async accepted(): Promise<{ groupId: string }> {
    await condition(() => this.projectedOnce);
    return { groupId: this.group.id };
  }

  async rescale(scale: number): Promise<void> {
    this.group.scale = scale;
    this.lastActivity = Date.now();
    this.paused = false;
    this.retryFailing();
    await this.written();
  }

  async update(patch: GroupSettingsPatch): Promise<void> {
    const next = applyGroupPatch(this.group, this.spec, patch);
    this.group = next.group;
    this.spec = next.spec;
    if (next.restart) this.generation += 1;
    this.lastActivity = Date.now();
    this.retryFailing();
    await this.written();
  }

  async pause(): Promise<void> {
    this.group = { ...this.group, paused: true };
    await this.written();
  }

  async resume(): Promise<void> {
    this.group = { ...this.group, paused: false };
    this.paused = false;
    this.lastActivity = Date.now();
    this.retryFailing();
    await this.written();
  }

  /** A new generation: reconcile replaces each older driver once its successor is READY. */
  async restart(): Promise<void> {
    this.generation += 1;
    this.lastActivity = Date.now();
    this.retryFailing();
    await this.written();
  }

  async archive(): Promise<void> {
    this.group = archivedGroup(this.group, Date.now());
    await this.written();
  }

  wake(): void {
    this.lastActivity = Date.now();
    if (this.paused) {
      this.paused = false;
      log.info('waking paused group', { groupId: this.group.id });
    }
    this.wakeLoop();
  }

  instanceReady(instanceId: string, appId?: string, endpoint?: string): void {
    const inst = this.instances.get(instanceId);
    if (!inst) return;
    inst.ready = true;
    if (endpoint) inst.endpoint = endpoint;
    if (this.crash.failures > 0) this.retryFailing();
    // The idle clock of autoPause starts when a driver can take work, not while drivers start.
    this.lastActivity = Date.now();
    const startTime = this.jobs.get(instanceId)?.startTime ?? Date.now();
    this.markJob(instanceId, { state: instanceJobState(inst), ...(appId ? { appId } : {}), startTime });
  }

  instanceState(instanceId: string, state: 'BUSY' | 'READY'): void {
    const inst = this.instances.get(instanceId);
    this.lastActivity = Date.now();
    if (!inst) return;
    inst.busy = state === 'BUSY';
    if (inst.ready) this.markJob(instanceId, { state: instanceJobState(inst) });
    else this.wakeLoop();
  }

  /** Instances the API may call directly: READY, not draining, with a direct channel. */
  directEndpoints(): DirectEndpoint[] {
    return [...this.instances.values()]
      .filter((i) => i.ready && !i.draining && i.endpoint)
      .map((i) => ({ instanceId: i.jobId, driverId: instanceDriverId(i.jobId), endpoint: i.endpoint! }));
  }

  // ---- the loop -----------------------------------------------------------------------------------
  /** First thing of a run: a resumed run asks for its drivers again (launch is idempotent). */
  begin(): void {
    if (this.input.resume) for (const jobId of this.instances.keys()) this.launch(jobId);
    else setSearch({ groupId: this.group.id, clusterName: this.group.clusterName, jobType: JobType.INTERACTIVE });
  }

  /** Takes in what the drivers reported, pauses an idle group, and moves instances towards the desired number. */
  step(): void {
    for (let e = this.drivers.events.shift(); e; e = this.drivers.events.shift()) this.onStatus(e.jobId, e.st);
    if (shouldPause(this.idleView(), Date.now())) {
      this.paused = true;
      log.info('pausing idle group', { groupId: this.group.id, idleFor: Date.now() - this.lastActivity });
    }
    this.reconcile();
    this.steppedAt = this.tick;
  }

  /**
   * Writes what changed, in one activity: instance jobs first, then the group (whose write releases waiting
   * updates). An ordinary activity, not a local one (activity-options.ts, entityProjection): what the loop
   * decides after it must be decided in the same workflow task live and on replay.
   */
  async flush(): Promise<void> {
    const writes = [...this.dirtyJobs].map((jobId) => ({
      jobId,
      job: { ...this.jobs.get(jobId)! },
      v: this.versions.next(),
    }));
    this.dirtyJobs.clear();
    const groupWrite = this.groupDirty ? { g: { ...this.group }, v: this.versions.next() } : undefined;
    if (writes.length > 0 || groupWrite) {
      await entityProjection.projectGroupStep(
        writes.map((w) => ({ job: w.job, version: w.v })),
        groupWrite && { group: groupWrite.g, version: groupWrite.v },
      );
    }
    if (groupWrite) {
      this.projectedOnce = true;
      // A handler that changed the group meanwhile keeps it dirty: its change is written next round.
      if (JSON.stringify(groupWrite.g) === JSON.stringify(this.group)) this.groupDirty = false;
    }
    for (const w of writes) if (isTerminal(w.job.state)) this.jobs.delete(w.jobId);
  }

  /** Nothing is waiting to be written or removed. */
  settled(): boolean {
    return !this.groupDirty && this.dirtyJobs.size === 0 && !this.drivers.removing();
  }

  /** Archived, every driver removed and every record written: the workflow may end. */
  finished(): boolean {
    return this.group.state === GroupState.ARCHIVED && this.instances.size === 0 && this.settled();
  }

  /** Waits until something happens, or until the group may have become idle long enough to pause. */
  async waitForChange(): Promise<void> {
    // Since the step, not since now: a handler that ran while flush() wrote (a wake, say) changed what step()
    // would decide, and nothing else would wake the loop for it.
    const seen = this.steppedAt;
    const woken = () => this.tick !== seen || this.drivers.events.length > 0 || !this.settledWrites();
    const now = Date.now();
    const waits = [pauseCheckIn(this.idleView(), now), this.replaceIn(now)].filter((w) => w !== undefined);
    if (waits.length === 0) await condition(woken);
    else await condition(woken, Math.min(...waits));
  }

  /** Stops watching (the next run watches again) and returns the next run's input. */
  continueInput(): GroupWorkflowInput {
    this.drivers.unwatchAll();
    const resume: GroupResume = {
      seq: this.versions.last,
      nextInstance: this.nextInstance,
      generation: this.generation,
      paused: this.paused,
      lastActivity: this.lastActivity,
      instances: [...this.instances.values()],
      jobs: Object.fromEntries(this.jobs),
      ...(this.crash.failures > 0 ? { crash: this.crash } : {}),
    };
    return { ...this.input, group: this.group, spec: this.spec, resume };
  }

  // ---- instances ----------------------------------------------------------------------------------
  private settledWrites(): boolean {
    return !this.groupDirty && this.dirtyJobs.size === 0;
  }

  private wakeLoop(): void {
    this.tick += 1;
  }

  /** Waits until the loop has written the group record with the caller's change. */
  private async written(): Promise<void> {
    this.groupDirty = true;
    this.wakeLoop();
    await condition(() => !this.groupDirty);
  }

  private markJob(jobId: string, patch: Partial<Job>): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    Object.assign(job, patch);
    this.dirtyJobs.add(jobId);
    this.wakeLoop();
  }

  private idleView(): IdleView {
    return {
      group: this.group,
      paused: this.paused,
      instances: [...this.instances.values()],
      lastActivity: this.lastActivity,
      idlePauseMs: this.input.idlePauseMs,
    };
  }

  private reconcile(): void {
    const plan = planReconcile([...this.instances.values()], this.generation, desiredScale(this.group, this.paused));
    for (const jobId of plan.drain) this.instances.get(jobId)!.draining = true;
    const start = plan.start > 0 && this.holdingBack(Date.now()) ? 0 : plan.start;
    for (let i = 0; i < start; i++) this.startInstance();
    for (const jobId of plan.stop) this.endInstance(jobId, JobState.FINISHED);
    for (const inst of this.instances.values()) {
      const st = this.status.get(inst.jobId);
      if (st && !this.drivers.isWatched(inst.jobId) && !this.drivers.isLaunching(inst.jobId))
        this.drivers.watch(inst.jobId, st, inst.ready, inst.host);
    }
  }

  private onStatus(jobId: string, st: DriverStatus): void {
    const inst = this.instances.get(jobId);
    if (!inst) return;
    this.status.set(jobId, st);
    const job = this.jobs.get(jobId)!;
    // The launch says which host owns the driver: every later call on it goes there (domain/hosts.ts).
    if (st.host && !inst.host) {
      inst.host = st.host;
      this.markJob(jobId, { host: st.host.id });
    }
    const effect = instanceStatusEffect(job, inst, st);
    // A dead driver's instance ends; reconcile() starts a replacement, backing off while drivers fail to start.
    if (effect.ended) {
      if (!inst.ready) this.startFailed(effect.error);
      this.endInstance(jobId, JobState.FAILED, effect.error);
      return;
    }
    const cause = st.phase === 'UNKNOWN' ? (st.message ?? 'the cluster does not answer') : undefined;
    const seen = withReachability({ ...job, ...effect.patch }, cause, Date.now(), this.unreachable.get(jobId));
    if (seen.unreachable) this.unreachable.set(jobId, seen.unreachable);
    else this.unreachable.delete(jobId);
    const patch: Partial<Job> = { ...effect.patch, state: seen.job.state };
    if (seen.job.error !== job.error) patch.error = seen.job.error;
    if (patch.state !== job.state || 'error' in patch || Object.keys(effect.patch).length > 0) {
      this.markJob(jobId, patch);
      if (patch.error === undefined && 'error' in patch) delete this.jobs.get(jobId)!.error;
    }
  }

  // ---- crash loops --------------------------------------------------------------------------------
  /** A driver failed before READY: the next replacement waits longer, and after the limit none follows. */
  private startFailed(error: string): void {
    this.crash = afterFailure(this.crash, error, Date.now(), this.crashSettings());
    if (crashLooping(this.crash, this.crashSettings())) {
      log.warn('group stops replacing failing drivers', { groupId: this.group.id, failures: this.crash.failures });
      this.group = { ...this.group, error: crashLoopError(this.crash) };
      this.groupDirty = true;
    }
  }

  /** A user acted (rescale, update, restart, resume) or a driver became READY: replace failed drivers again. */
  private retryFailing(): void {
    this.crash = noCrashLoop();
    if (this.group.error !== undefined) {
      const { error: _gone, ...rest } = this.group;
      this.group = rest;
      this.groupDirty = true;
    }
  }

  private crashSettings() {
    return this.input.crashLoop ?? DEFAULT_CRASH_LOOP;
  }

  /** Whether replacements wait now: the group gave up, or its backoff has not passed. */
  private holdingBack(now: number): boolean {
    if (this.crash.failures === 0) return false;
    const s = this.crashSettings();
    return crashLooping(this.crash, s) || now < nextStartAt(this.crash, s);
  }

  /** How long until a held-back replacement may start; undefined when none waits. */
  private replaceIn(now: number): number | undefined {
    const s = this.crashSettings();
    if (this.crash.failures === 0 || crashLooping(this.crash, s)) return undefined;
    const at = nextStartAt(this.crash, s);
    return at > now ? at - now : undefined;
  }

  private startInstance(): void {
    const job = newInstanceJob(this.group, this.spec, this.nextInstance++, Date.now());
    this.instances.set(job.jobId, {
      jobId: job.jobId,
      generation: this.generation,
      ready: false,
      busy: false,
      draining: false,
    });
    this.jobs.set(job.jobId, job);
    this.dirtyJobs.add(job.jobId);
    this.launch(job.jobId);
  }

  /** Ends an instance: its job gets `state`, its driver is removed in the background. */
  private endInstance(jobId: string, state: JobState, error?: string): void {
    const host = this.instances.get(jobId)?.host;
    this.instances.delete(jobId);
    this.status.delete(jobId);
    this.unreachable.delete(jobId);
    this.markJob(jobId, { state, endTime: Date.now(), ...(error ? { error } : {}) });
    this.drivers.remove(jobId, host);
  }

  private launch(jobId: string): void {
    this.drivers.launch(jobId, runnerDriverSpec(this.group, this.spec, jobId), this.instances.get(jobId)?.host);
  }
}
