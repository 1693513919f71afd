// Schedule keeper workflow `schedulekeeper/<scheduleId>`: owns one schedule's settings and state, keeps
// the Temporal Schedule `schedule/<scheduleId>` (whose action starts ordinary job workflows carrying the
// scheduleId) in step with them, writes the schedule's read model, and disables the schedule at its endTime.
//
//   ENABLED ⇄ PAUSED          (pause / resume)
//   ENABLED, PAUSED ──disable, or endTime passed──▶ DISABLED ──resume (endTime not passed)──▶ ENABLED
//
// The messages are defined here (the API uses them by these names); what they do is in ScheduleKeeper
// (schedule-keeper.ts), and the rules it follows are pure functions in domain/.
import { allHandlersFinished, condition, defineQuery, defineUpdate, setHandler } from '@temporalio/workflow';
import type { ScheduleSettingsPatch, ScheduleWorkflowInput } from '../domain/schedule';
import { checkDisable, checkPause, checkResume } from '../domain/schedule-settings';
import { ScheduleState } from '../domain/states';
import type { Schedule } from '../domain/types';
import { ScheduleKeeper } from './schedule-keeper';

export const acceptedScheduleUpdate = defineUpdate<{ scheduleId: string }>('accepted');
export const updateScheduleUpdate = defineUpdate<void, [ScheduleSettingsPatch]>('update');
export const pauseScheduleUpdate = defineUpdate<void>('pause');
export const resumeScheduleUpdate = defineUpdate<void>('resume');
export const disableScheduleUpdate = defineUpdate<void>('disable');
export const deleteScheduleUpdate = defineUpdate<void>('delete');
export const scheduleQuery = defineQuery<Omit<Schedule, 'jobs'>>('schedule');

export async function scheduleWorkflow(input: ScheduleWorkflowInput): Promise<void> {
  const k = new ScheduleKeeper(input);
  /** Validators: nothing changes a deleted schedule; `check` adds the message's own rule. */
  const valid =
    (check?: () => void) =>
    (..._args: unknown[]) => {
      k.checkNotDeleted();
      check?.();
    };
  setHandler(scheduleQuery, () => k.schedule);
  setHandler(acceptedScheduleUpdate, () => k.accepted());
  setHandler(updateScheduleUpdate, (patch) => k.update(patch), { validator: valid() });
  setHandler(pauseScheduleUpdate, () => k.setState(ScheduleState.PAUSED), {
    validator: valid(() => checkPause(k.schedule)),
  });
  setHandler(resumeScheduleUpdate, () => k.setState(ScheduleState.ENABLED), {
    validator: valid(() => checkResume(k.schedule, Date.now())),
  });
  setHandler(disableScheduleUpdate, () => k.setState(ScheduleState.DISABLED), {
    validator: valid(() => checkDisable(k.schedule)),
  });
  setHandler(deleteScheduleUpdate, () => k.delete(), { validator: valid() });

  if (await k.begin()) await k.keep();
  await condition(allHandlersFinished);
}
