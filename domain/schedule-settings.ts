// A schedule's settings and state changes, what its Temporal Schedule is made of, and the checks its
// update validators make, as pure functions.
import type { ScheduleSettingsPatch, TemporalScheduleDef } from './schedule';
import { applySharedPatch } from './settings-patch';
import { ScheduleState } from './states';
import type { Schedule, SparkSpec } from './types';

type ScheduleRecord = Omit<Schedule, 'jobs'>;

/** Grace after endTime before the schedule reads DISABLED, so a tick at endTime itself still fires. */
export const END_GRACE_MS = 2_000;

/** The schedule and spec after `patch` (a null startTime or endTime removes it). */
export function applySchedulePatch(
  schedule: ScheduleRecord,
  spec: SparkSpec,
  patch: ScheduleSettingsPatch,
): { schedule: ScheduleRecord; spec: SparkSpec } {
  const { record: s, spec: sp } = applySharedPatch(schedule, spec, patch);
  if (patch.cron !== undefined) s.cron = patch.cron;
  if (patch.args !== undefined) s.args = sp.args = patch.args;
  if (patch.jobClass !== undefined) s.jobClass = sp.jobClass = patch.jobClass;
  if (patch.startTime !== undefined) s.startTime = patch.startTime ?? undefined;
  if (patch.endTime !== undefined) s.endTime = patch.endTime ?? undefined;
  if (patch.maxRetries !== undefined) s.maxRetries = patch.maxRetries;
  return { schedule: s, spec: sp };
}

/** The schedule in `state`; DISABLED records when. */
export const withScheduleState = (schedule: ScheduleRecord, state: ScheduleState, now: number): ScheduleRecord => ({
  ...schedule,
  state,
  disabledTime: state === ScheduleState.DISABLED ? now : undefined,
});

/** The Temporal Schedule that runs this schedule: paused unless ENABLED, with the state as its note. */
export function temporalScheduleDef(schedule: ScheduleRecord, spec: SparkSpec, taskQueue: string): TemporalScheduleDef {
  const enabled = schedule.state === ScheduleState.ENABLED;
  return {
    scheduleId: schedule.id,
    cron: schedule.cron,
    ...(schedule.startTime !== undefined ? { startTime: schedule.startTime } : {}),
    ...(schedule.endTime !== undefined ? { endTime: schedule.endTime } : {}),
    paused: !enabled,
    note: enabled ? '' : schedule.state,
    taskQueue,
    spec,
    maxRetries: schedule.maxRetries,
  };
}

/** Milliseconds until the schedule is to read DISABLED for its endTime (≤ 0: now); undefined if never. */
export const disableDueIn = (schedule: Pick<ScheduleRecord, 'endTime' | 'state'>, now: number): number | undefined =>
  schedule.endTime !== undefined && schedule.state !== ScheduleState.DISABLED
    ? schedule.endTime + END_GRACE_MS - now
    : undefined;

const ended = (s: Pick<ScheduleRecord, 'endTime'>, now: number) => s.endTime !== undefined && now >= s.endTime;

/** Rejects pausing a schedule that is not ENABLED. */
export function checkPause(s: Pick<ScheduleRecord, 'name' | 'state'>): void {
  if (s.state !== ScheduleState.ENABLED) throw new Error(`schedule '${s.name}' is ${s.state}, not ENABLED`);
}

/** Rejects resuming an ENABLED schedule, or one whose endTime has passed. */
export function checkResume(s: Pick<ScheduleRecord, 'name' | 'state' | 'endTime'>, now: number): void {
  if (s.state === ScheduleState.ENABLED) throw new Error(`schedule '${s.name}' is already ENABLED`);
  if (ended(s, now)) throw new Error(`schedule '${s.name}' ended at its endTime; update endTime to resume it`);
}

/** Rejects disabling twice. */
export function checkDisable(s: Pick<ScheduleRecord, 'name' | 'state'>): void {
  if (s.state === ScheduleState.DISABLED) throw new Error(`schedule '${s.name}' is already DISABLED`);
}
