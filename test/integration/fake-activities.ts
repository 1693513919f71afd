// Replaced activities for workflow tests: a cluster whose drivers do what the test says, a read model
// kept in memory (versioned like the real projection), and Temporal Schedule calls recorded.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ConnectServerRecord } from '../../domain/connect';
import type { DriverSpec, DriverStatus } from '../../domain/driver';
import { busyOnceRunning, endReplaces, finishedOnSuccess } from '../../domain/job-transitions';
import type { TemporalScheduleDef } from '../../domain/schedule';
import type { EngineEndpoint, SqlEngineRecord } from '../../domain/sql-engine';
import type { SqlEngine } from '../../domain/states';
import type { Group, Job, JobInstanceResult, Schedule } from '../../domain/types';

type Phase = DriverStatus['phase'];

/** A fake cluster: launched drivers start in `initial`, and the test moves them with set(). */
export function fakeCluster(initial: DriverStatus = { phase: 'RUNNING' }) {
  const drivers = new Map<string, DriverStatus>();
  const launches: DriverSpec[] = [];
  const removed: string[] = [];
  /** Driver ids whose launch activity has begun (a slow one is still under way until launched() says so). */
  const begun = new Set<string>();
  /** Job ids whose BUSY record the watch activity wrote (watchJobDriver). */
  const busyWrites: string[] = [];
  /** Job ids whose FINISHED record the watch activity wrote (watchJobDriver with a finish version). */
  const finishWrites: string[] = [];
  /** Per driverId: errors the next launches throw, in order. */
  const launchErrors = new Map<string, Error[]>();
  /** Per driverId: a launch that waits this long (ms) first. */
  const launchDelay = new Map<string, number>();
  /** Per driverId: a removal that waits this long (ms) first. */
  const removeDelay = new Map<string, number>();
  const changed = (a: DriverStatus, b: DriverStatus) =>
    a.phase !== b.phase || (b.appId !== undefined && b.appId !== a.appId);

  const activities = {
    async launchDriver(
      _cluster: string,
      spec: DriverSpec,
      starting?: { job: Job; version: number },
    ): Promise<DriverStatus> {
      if (starting) await read.projectJob(starting.job, starting.version);
      begun.add(spec.driverId);
      const delay = launchDelay.get(spec.driverId);
      if (delay) await new Promise((r) => setTimeout(r, delay));
      const err = launchErrors.get(spec.driverId)?.shift();
      if (err) throw err;
      launches.push(spec);
      if (!drivers.has(spec.driverId)) drivers.set(spec.driverId, { ...initial });
      return drivers.get(spec.driverId)!;
    },
    /** Like the real watch: returns once the status differs from `known`, heartbeating meanwhile. */
    async watchDriver(_cluster: string, driverId: string, known: DriverStatus): Promise<DriverStatus> {
      const ctx = Context.current();
      for (;;) {
        const st = drivers.get(driverId) ?? { phase: 'MISSING' };
        if (changed(known, st) || ctx.cancellationSignal.aborted) return st;
        ctx.heartbeat();
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    /**
     * Like the real one: writes the BUSY record when a STARTING job's driver is first seen RUNNING, then
     * watches on; with `finishVersion`, a driver that SUCCEEDED ends the job here (FINISHED, driver removed).
     */
    async watchJobDriver(
      cluster: string,
      driverId: string,
      known: DriverStatus,
      _since: number | undefined,
      record: { job: Job; version: number },
      _maxWaitMs?: number,
      finishVersion?: number,
    ): Promise<{ status: DriverStatus; busy?: Job; finished?: Job }> {
      const signal = Context.current().cancellationSignal;
      let job = record.job;
      let busy: Job | undefined;
      let status = await activities.watchDriver(cluster, driverId, known);
      const seenRunning = signal.aborted ? undefined : busyOnceRunning(job, status, Date.now());
      if (seenRunning) {
        busy = job = seenRunning;
        busyWrites.push(busy.jobId);
        await read.projectJob(busy, record.version);
        status = await activities.watchDriver(cluster, driverId, status);
      }
      if (finishVersion === undefined || signal.aborted) return { status, busy };
      const finished = finishedOnSuccess(job, status, Date.now());
      if (!finished) return { status, busy };
      finishWrites.push(finished.jobId);
      await read.projectJob(finished, finishVersion);
      await activities.removeDriver(cluster, driverId);
      return { status, busy, finished };
    },
    async removeDriver(_cluster: string, driverId: string): Promise<void> {
      const delay = removeDelay.get(driverId);
      if (delay) await new Promise((r) => setTimeout(r, delay));
      removed.push(driverId);
      drivers.delete(driverId);
    },
    awaitEngineReady: (_cluster: string, driverId: string, type: SqlEngine, timeoutMs: number) =>
      engineReady(() => drivers.get(driverId), `the ${type} engine`, timeoutMs),
    awaitConnectServerReady: (_cluster: string, driverId: string, timeoutMs: number) =>
      engineReady(() => drivers.get(driverId), 'the Spark Connect server', timeoutMs),
  };
  const read = readModel();
  return {
    activities: { ...activities, ...read.activities },
    /** An engine's (or Connect server's) driver runs and answers at `endpoint`: its await…Ready resolves. */
    ready: (driverId: string, endpoint: EngineEndpoint = { host: 'localhost', port: 10000 }) =>
      drivers.set(driverId, { phase: 'RUNNING', endpoint }),
    /** Launched and not removed (a driver launched after its removal shows here). */
    alive: (driverId: string) => drivers.has(driverId),
    read,
    launches,
    removed,
    busyWrites,
    finishWrites,
    launched: (driverId: string) => launches.some((l) => l.driverId === driverId),
    launchBegun: (driverId: string) => begun.has(driverId),
    set: (driverId: string, phase: Phase, extra: Partial<DriverStatus> = {}) =>
      drivers.set(driverId, { phase, ...extra }),
    failLaunch: (driverId: string, ...errors: Error[]) => launchErrors.set(driverId, errors),
    slowLaunch: (driverId: string, ms: number) => launchDelay.set(driverId, ms),
    slowRemove: (driverId: string, ms: number) => removeDelay.set(driverId, ms),
    projectJob: read.projectJob,
  };
}

/** The read model: every accepted write, per id, in order. */
export function readModel() {
  const writes = {
    jobs: new Map<string, Job[]>(),
    groups: new Map<string, Omit<Group, 'jobs'>[]>(),
    schedules: new Map<string, Omit<Schedule, 'jobs'>[]>(),
    sqlEngines: new Map<string, SqlEngineRecord[]>(),
    connectServers: new Map<string, ConnectServerRecord[]>(),
  };
  /** Engines (and Connect servers: their ids differ) whose record was deleted after their last write. */
  const deletedEngines = new Set<string>();
  const versions = new Map<string, number>();
  const results = new Map<string, JobInstanceResult>();
  /** While set, every group write waits for it (holdGroupWrites). */
  let groupGate: Promise<void> | undefined;
  function write<T>(kind: keyof typeof writes, id: string, doc: T, version: number): boolean {
    const key = `${kind}/${id}`;
    if ((versions.get(key) ?? 0) >= version) return false;
    versions.set(key, version);
    const list = (writes[kind] as Map<string, T[]>).get(id) ?? [];
    list.push(doc);
    (writes[kind] as Map<string, T[]>).set(id, list);
    return true;
  }
  // The real projection's rules: versions order the writes, and an ended job does not change state again.
  const projectJob = async (job: Job, v: number) =>
    endReplaces(last(writes.jobs, job.jobId)?.state, job.state) && write('jobs', job.jobId, job, v);
  // Like the real one: an end without a start time keeps the stored start time (and appId of the same try).
  const projectJobEnd = async (job: Job, v: number) => {
    const stored = last(writes.jobs, job.jobId);
    const kept: Partial<Pick<Job, 'startTime' | 'appId'>> = {};
    if (job.startTime === undefined && stored?.startTime !== undefined) kept.startTime = stored.startTime;
    if (job.appId === undefined && stored?.appId !== undefined && stored.attempt === job.attempt)
      kept.appId = stored.appId;
    await projectJob({ ...job, ...kept }, v);
    return kept;
  };
  const last = <T>(m: Map<string, T[]>, id: string): T | undefined => m.get(id)?.at(-1);
  const projectEngine = async (kind: 'sqlEngines' | 'connectServers', r: { id: string }, v: number) => {
    const ok = write(kind, r.id, r, v);
    if (ok) deletedEngines.delete(r.id);
    return ok;
  };
  // Like the real deleteOne: the document and its version go, so a new workflow's writes land again.
  const deleteEngine = async (kind: 'sqlEngines' | 'connectServers', id: string) => {
    deletedEngines.add(id);
    versions.delete(`${kind}/${id}`);
  };
  return {
    projectJob,
    activities: {
      projectJob,
      projectJobEnd,
      projectGroupStep: async (
        jobs: { job: Job; version: number }[],
        group?: { group: Omit<Group, 'jobs'>; version: number },
      ) => {
        if (groupGate) await groupGate;
        for (const w of jobs) await projectJob(w.job, w.version);
        if (group) write('groups', group.group.id, group.group, group.version);
      },
      projectSchedule: async (s: Omit<Schedule, 'jobs'>, v: number) => write('schedules', s.id, s, v),
      projectResult: async (r: JobInstanceResult) => void results.set(r.jobInstanceId, r),
      projectSqlEngine: (r: SqlEngineRecord, v: number) => projectEngine('sqlEngines', r, v),
      deleteSqlEngineRecord: (id: string) => deleteEngine('sqlEngines', id),
      projectConnectServer: (r: ConnectServerRecord, v: number) => projectEngine('connectServers', r, v),
      deleteConnectServerRecord: (id: string) => deleteEngine('connectServers', id),
    },
    /** Holds every group write (projectGroupStep) until the returned function is called. */
    holdGroupWrites(): () => void {
      let release!: () => void;
      groupGate = new Promise<void>((r) => (release = r));
      return () => {
        groupGate = undefined;
        release();
      };
    },
    job: (id: string) => last(writes.jobs, id),
    jobStates: (id: string) => (writes.jobs.get(id) ?? []).map((j) => j.state),
    jobsOf: (groupId: string) => [...writes.jobs.values()].map((l) => l.at(-1)!).filter((j) => j.groupId === groupId),
    group: (id: string) => last(writes.groups, id),
    schedule: (id: string) => last(writes.schedules, id),
    scheduleWrites: (id: string) => writes.schedules.get(id) ?? [],
    /** The engine's record as stored: undefined once deleted. */
    sqlEngine: (id: string) => (deletedEngines.has(id) ? undefined : last(writes.sqlEngines, id)),
    sqlEngineWrites: (id: string) => writes.sqlEngines.get(id) ?? [],
    sqlEngineStates: (id: string) => (writes.sqlEngines.get(id) ?? []).map((r) => r.state),
    /** The Connect server's record as stored: undefined once deleted. */
    connectServer: (id: string) => (deletedEngines.has(id) ? undefined : last(writes.connectServers, id)),
    connectServerWrites: (id: string) => writes.connectServers.get(id) ?? [],
    connectServerStates: (id: string) => (writes.connectServers.get(id) ?? []).map((r) => r.state),
  };
}

/** Temporal Schedule activities that record what they were asked; `refuse` makes the next apply fail. */
export function fakeTemporalSchedules() {
  const applied: TemporalScheduleDef[] = [];
  const deleted: string[] = [];
  const deletedRecords: string[] = [];
  let refusal: string | undefined;
  let applyDelayMs = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    activities: {
      async applyTemporalSchedule(def: TemporalScheduleDef): Promise<void> {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          await new Promise((r) => setTimeout(r, applyDelayMs));
          if (refusal) {
            const message = refusal;
            refusal = undefined;
            throw ApplicationFailure.nonRetryable(message, 'InvalidSchedule');
          }
          applied.push(def);
        } finally {
          inFlight -= 1;
        }
      },
      deleteTemporalSchedule: async (scheduleId: string) => void deleted.push(scheduleId),
      deleteScheduleRecord: async (scheduleId: string) => void deletedRecords.push(scheduleId),
    },
    applied,
    appliedTo: (scheduleId: string) => applied.filter((d) => d.scheduleId === scheduleId),
    deleted,
    deletedRecords,
    refuse: (message: string) => (refusal = message),
    slowApply: (ms: number) => (applyDelayMs = ms),
    maxInFlight: () => maxInFlight,
  };
}

/**
 * Like the real awaitEngineReady and awaitConnectServerReady: resolves with the endpoint once the driver runs
 * with one, fails with a non-retryable EngineFailed once it ended or is gone, or when `timeoutMs` passes first.
 */
async function engineReady(
  status: () => DriverStatus | undefined,
  what: string,
  timeoutMs: number,
): Promise<EngineEndpoint> {
  const ctx = Context.current();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const st = status() ?? { phase: 'MISSING' };
    if (st.phase === 'FAILED' || st.phase === 'SUCCEEDED' || st.phase === 'MISSING') {
      throw ApplicationFailure.nonRetryable(`${what} ended before it listened (${st.phase})`, 'EngineFailed');
    }
    if (st.phase === 'RUNNING' && st.endpoint) return st.endpoint;
    if (Date.now() > deadline) {
      throw ApplicationFailure.nonRetryable(`${what} did not answer within ${timeoutMs} ms`, 'EngineFailed');
    }
    ctx.heartbeat(st.phase);
    await new Promise((r) => setTimeout(r, 25));
    if (ctx.cancellationSignal.aborted) throw ApplicationFailure.nonRetryable('cancelled', 'Cancelled');
  }
}
