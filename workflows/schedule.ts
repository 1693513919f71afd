// Schedule keeper workflow `schedulekeeper/<scheduleId>`: owns one schedule's settings and state, keeps
// the Temporal Schedule `schedule/<scheduleId>` (whose action starts ordinary job workflows carrying the
// scheduleId) in step with them, writes the schedule's read model, and disables the schedule at its endTime.
//
//   ENABLED ⇄ PAUSED          (pause / resume)
//   ENABLED, PAUSED ──disable, or endTime passed──▶ DISABLED ──resume (endTime not passed)──▶ ENABLED
//
// Handlers that call activities run one at a time (a lock), so a change is applied to Temporal and the
// read model before the next starts, and an update returns only once both show it.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { formatTags } from '../domain/delimited';
import type { ScheduleSettingsPatch, ScheduleWorkflowInput, TemporalScheduleDef } from '../domain/schedule';
import { ScheduleState } from '../domain/states';
import { mergeArtifacts } from '../domain/artifacts';
import type { Schedule } from '../domain/types';
import { projection, short } from './activities';
import { setSearch } from './search';

export const acceptedScheduleUpdate = defineUpdate<{ scheduleId: string }>('accepted');
export const updateScheduleUpdate = defineUpdate<void, [ScheduleSettingsPatch]>('update');
export const pauseScheduleUpdate = defineUpdate<void>('pause');
export const resumeScheduleUpdate = defineUpdate<void>('resume');
export const disableScheduleUpdate = defineUpdate<void>('disable');
export const deleteScheduleUpdate = defineUpdate<void>('delete');
export const scheduleQuery = defineQuery<Omit<Schedule, 'jobs'>>('schedule');

const { projectSchedule } = projection;

/** Grace after endTime before the schedule reads DISABLED, so a tick at endTime itself still fires. */
const END_GRACE_MS = 2_000;

export async function scheduleWorkflow(input: ScheduleWorkflowInput): Promise<void> {
  let schedule = { ...input.schedule };
  let spec = { ...input.spec };
  const scheduleId = schedule.id;
  let seq = input.resume?.seq ?? 0;
  let projectedOnce = input.resume !== undefined;
  let initError: string | undefined;
  let deleted = false;
  let chain: Promise<unknown> = Promise.resolve();

  /** Runs fn after every earlier locked call has finished. */
  const locked = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn);
    chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  };

  const def = (s: Omit<Schedule, 'jobs'>, sp: typeof spec): TemporalScheduleDef => ({
    scheduleId,
    cron: s.cron,
    ...(s.startTime !== undefined ? { startTime: s.startTime } : {}),
    ...(s.endTime !== undefined ? { endTime: s.endTime } : {}),
    paused: s.state !== ScheduleState.ENABLED,
    note: s.state === ScheduleState.ENABLED ? '' : s.state,
    taskQueue: input.taskQueue,
    spec: sp,
    maxRetries: s.maxRetries,
  });

  /** Applies a new version of the schedule to Temporal, then to the read model; nothing changes on failure. */
  const commit = async (next: Omit<Schedule, 'jobs'>, nextSpec: typeof spec) => {
    await short.applyTemporalSchedule(def(next, nextSpec));
    schedule = next;
    spec = nextSpec;
    seq += 1;
    await projectSchedule({ ...schedule }, seq);
    projectedOnce = true;
  };

  const ended = () => schedule.endTime !== undefined && Date.now() >= schedule.endTime;
  const setState = (state: ScheduleState) =>
    locked(() =>
      commit({ ...schedule, state, ...(state === ScheduleState.DISABLED ? { disabledTime: Date.now() } : { disabledTime: undefined }) }, spec),
    );

  setHandler(scheduleQuery, () => schedule);
  setHandler(acceptedScheduleUpdate, async () => {
    await condition(() => projectedOnce || initError !== undefined);
    if (initError !== undefined) throw ApplicationFailure.nonRetryable(initError, 'InvalidSchedule');
    return { scheduleId };
  });
  setHandler(
    updateScheduleUpdate,
    (patch) =>
      locked(async () => {
        const next = { ...schedule };
        const nextSpec = { ...spec };
        if (patch.description !== undefined) next.description = patch.description;
        if (patch.tags !== undefined) {
          next.tags = formatTags(patch.tags);
          nextSpec.tags = patch.tags;
        }
        if (patch.jobConfig !== undefined) {
          next.jobConfig = patch.jobConfig;
          nextSpec.jobConfig = patch.jobConfig;
        }
        if (patch.cron !== undefined) next.cron = patch.cron;
        if (patch.args !== undefined) next.args = nextSpec.args = patch.args;
        if (patch.jobClass !== undefined) next.jobClass = nextSpec.jobClass = patch.jobClass;
        if (patch.pyRequirements !== undefined) {
          next.pyRequirements = patch.pyRequirements.join(';');
          nextSpec.pyRequirements = patch.pyRequirements;
        }
        if (patch.packages !== undefined) {
          next.packages = patch.packages.join(',');
          nextSpec.packages = patch.packages;
        }
        if (patch.startTime !== undefined) next.startTime = patch.startTime ?? undefined;
        if (patch.endTime !== undefined) next.endTime = patch.endTime ?? undefined;
        if (patch.maxRetries !== undefined) next.maxRetries = patch.maxRetries;
        if (patch.memorySettings !== undefined) next.memorySettings = nextSpec.memorySettings = patch.memorySettings;
        if (patch.addArtifacts !== undefined) nextSpec.artifacts = mergeArtifacts(nextSpec.artifacts, patch.addArtifacts);
        await commit(next, nextSpec);
      }),
    { validator: (_patch: ScheduleSettingsPatch) => checkNotDeleted() },
  );
  setHandler(pauseScheduleUpdate, () => setState(ScheduleState.PAUSED), {
    validator: () => {
      checkNotDeleted();
      if (schedule.state !== ScheduleState.ENABLED) throw new Error(`schedule '${schedule.name}' is ${schedule.state}, not ENABLED`);
    },
  });
  setHandler(resumeScheduleUpdate, () => setState(ScheduleState.ENABLED), {
    validator: () => {
      checkNotDeleted();
      if (schedule.state === ScheduleState.ENABLED) throw new Error(`schedule '${schedule.name}' is already ENABLED`);
      if (ended()) throw new Error(`schedule '${schedule.name}' ended at its endTime; update endTime to resume it`);
    },
  });
  setHandler(disableScheduleUpdate, () => setState(ScheduleState.DISABLED), {
    validator: () => {
      checkNotDeleted();
      if (schedule.state === ScheduleState.DISABLED) throw new Error(`schedule '${schedule.name}' is already DISABLED`);
    },
  });
  setHandler(
    deleteScheduleUpdate,
    () =>
      locked(async () => {
        await short.deleteTemporalSchedule(scheduleId);
        await short.deleteScheduleRecord(scheduleId, schedule.name);
        deleted = true;
      }),
    { validator: () => checkNotDeleted() },
  );

  function checkNotDeleted() {
    if (deleted) throw new Error(`schedule '${schedule.name}' is deleted`);
  }

  if (!input.resume) {
    setSearch({ scheduleId, clusterName: schedule.clusterName, jobType: 'SINGLE' });
    try {
      await locked(() => commit(schedule, spec));
    } catch (e) {
      initError = (e as { cause?: Error }).cause?.message ?? (e as Error).message;
      await short.deleteTemporalSchedule(scheduleId);
      await condition(allHandlersFinished);
      return;
    }
  }

  for (;;) {
    const endsIn = schedule.endTime !== undefined && schedule.state !== ScheduleState.DISABLED ? schedule.endTime + END_GRACE_MS - Date.now() : undefined;
    if (endsIn !== undefined && endsIn <= 0) {
      await setState(ScheduleState.DISABLED);
      continue;
    }
    const before = seq;
    const woken = () => deleted || seq !== before || workflowInfo().continueAsNewSuggested;
    if (endsIn === undefined) await condition(woken);
    else await condition(woken, endsIn);
    if (deleted) break;
    if (workflowInfo().continueAsNewSuggested) {
      await chain;
      await condition(allHandlersFinished);
      await continueAsNew<typeof scheduleWorkflow>({ ...input, schedule, spec, resume: { seq } });
    }
  }
  await condition(allHandlersFinished);
}
