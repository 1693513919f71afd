// Replaced activities for workflow tests: a cluster whose drivers do what the test says, a read model
// kept in memory (versioned like the real projection), and Temporal Schedule calls recorded.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DriverSpec, DriverStatus } from '../../domain/driver';
import type { TemporalScheduleDef } from '../../domain/schedule';
import type { Group, Job, JobInstanceResult, Schedule } from '../../domain/types';

type Phase = DriverStatus['phase'];

/** A fake cluster: launched drivers start in `initial`, and the test moves them with set(). */
export function fakeCluster(initial: DriverStatus = { phase: 'RUNNING' }) {
  const drivers = new Map<string, DriverStatus>();
  const launches: DriverSpec[] = [];
  const removed: string[] = [];
  /** Per driverId: errors the next launches throw, in order. */
  const launchErrors = new Map<string, Error[]>();
  /** Per driverId: a launch that waits this long (ms) first. */
  const launchDelay = new Map<string, number>();
  const changed = (a: DriverStatus, b: DriverStatus) => a.phase !== b.phase || (b.appId !== undefined && b.appId !== a.appId);

  const activities = {
    async launchDriver(_cluster: string, spec: DriverSpec, starting?: { job: Job; version: number }): Promise<DriverStatus> {
      if (starting) await read.projectJob(starting.job, starting.version);
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
    async removeDriver(_cluster: string, driverId: string): Promise<void> {
      removed.push(driverId);
      drivers.delete(driverId);
    },
  };
  const read = readModel();
  return {
    activities: { ...activities, ...read.activities },
    read,
    launches,
    removed,
    launched: (driverId: string) => launches.some((l) => l.driverId === driverId),
    set: (driverId: string, phase: Phase, extra: Partial<DriverStatus> = {}) => drivers.set(driverId, { phase, ...extra }),
    failLaunch: (driverId: string, ...errors: Error[]) => launchErrors.set(driverId, errors),
    slowLaunch: (driverId: string, ms: number) => launchDelay.set(driverId, ms),
    projectJob: read.projectJob,
  };
}

/** The read model: every accepted write, per id, in order. */
export function readModel() {
  const writes = { jobs: new Map<string, Job[]>(), groups: new Map<string, Omit<Group, 'jobs'>[]>(), schedules: new Map<string, Omit<Schedule, 'jobs'>[]>() };
  const versions = new Map<string, number>();
  const results = new Map<string, JobInstanceResult>();
  function write<T>(kind: keyof typeof writes, id: string, doc: T, version: number): boolean {
    const key = `${kind}/${id}`;
    if ((versions.get(key) ?? 0) >= version) return false;
    versions.set(key, version);
    const list = (writes[kind] as Map<string, T[]>).get(id) ?? [];
    list.push(doc);
    (writes[kind] as Map<string, T[]>).set(id, list);
    return true;
  }
  const projectJob = async (job: Job, v: number) => write('jobs', job.jobId, job, v);
  const last = <T>(m: Map<string, T[]>, id: string): T | undefined => m.get(id)?.at(-1);
  return {
    projectJob,
    activities: {
      projectJob,
      projectGroup: async (g: Omit<Group, 'jobs'>, v: number) => write('groups', g.id, g, v),
      projectSchedule: async (s: Omit<Schedule, 'jobs'>, v: number) => write('schedules', s.id, s, v),
      projectResult: async (r: JobInstanceResult) => void results.set(r.jobInstanceId, r),
    },
    job: (id: string) => last(writes.jobs, id),
    jobStates: (id: string) => (writes.jobs.get(id) ?? []).map((j) => j.state),
    jobsOf: (groupId: string) => [...writes.jobs.values()].map((l) => l.at(-1)!).filter((j) => j.groupId === groupId),
    group: (id: string) => last(writes.groups, id),
    schedule: (id: string) => last(writes.schedules, id),
    scheduleWrites: (id: string) => writes.schedules.get(id) ?? [],
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
