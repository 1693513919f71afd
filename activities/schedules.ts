// Activities that keep a Temporal Schedule in step with the schedule keeper workflow's settings.
import { ApplicationFailure } from '@temporalio/activity';
import { type Client, ScheduleNotFoundError } from '@temporalio/client';
import { jobWorkflowId, scheduleId as temporalScheduleId, SearchAttr } from '../domain/ids';
import type { JobWorkflowInput } from '../domain/job';
import {
  SCHEDULE_CATCHUP_WINDOW,
  SCHEDULE_OVERLAP_POLICY,
  scheduledJobIdPrefix,
  type TemporalScheduleDef,
} from '../domain/schedule';

function action(def: TemporalScheduleDef) {
  const input: JobWorkflowInput = { spec: def.spec, maxRetries: def.maxRetries, scheduleId: def.scheduleId };
  return {
    type: 'startWorkflow' as const,
    workflowType: 'singleJobWorkflow',
    workflowId: jobWorkflowId(scheduledJobIdPrefix(def.scheduleId)),
    taskQueue: def.taskQueue,
    args: [input],
    searchAttributes: {
      [SearchAttr.scheduleId]: [def.scheduleId],
      [SearchAttr.clusterName]: [def.spec.clusterName],
      [SearchAttr.jobType]: ['SINGLE'],
    },
  };
}

function spec(def: TemporalScheduleDef) {
  return {
    cronExpressions: [def.cron],
    ...(def.startTime !== undefined ? { startAt: new Date(def.startTime) } : {}),
    ...(def.endTime !== undefined ? { endAt: new Date(def.endTime) } : {}),
  };
}

export function createScheduleActivities(client: Client | undefined) {
  const temporal = () => {
    if (!client)
      throw ApplicationFailure.nonRetryable('this worker has no Temporal client for schedules', 'Misconfigured');
    return client;
  };
  return {
    /** Creates the Temporal Schedule, or brings an existing one to `def` (idempotent). */
    async applyTemporalSchedule(def: TemporalScheduleDef): Promise<void> {
      const id = temporalScheduleId(def.scheduleId);
      const handle = temporal().schedule.getHandle(id);
      try {
        await handle.update((prev) => ({
          ...prev,
          spec: spec(def),
          action: action(def),
          policies: { ...prev.policies, overlap: SCHEDULE_OVERLAP_POLICY, catchupWindow: SCHEDULE_CATCHUP_WINDOW },
          state: { ...prev.state, paused: def.paused, note: def.note },
        }));
        return;
      } catch (e) {
        if (!(e instanceof ScheduleNotFoundError)) throw e;
      }
      try {
        await temporal().schedule.create({
          scheduleId: id,
          spec: spec(def),
          action: action(def),
          policies: { overlap: SCHEDULE_OVERLAP_POLICY, catchupWindow: SCHEDULE_CATCHUP_WINDOW },
          state: { paused: def.paused, note: def.note },
          searchAttributes: { [SearchAttr.scheduleId]: [def.scheduleId] },
        });
      } catch (e) {
        const msg = (e as Error).message ?? '';
        // An invalid cron expression is refused by the server: retrying will not help.
        if (/invalid|cron/i.test(msg) && !/already/i.test(msg))
          throw ApplicationFailure.nonRetryable(msg, 'InvalidSchedule');
        throw e;
      }
    },

    async deleteTemporalSchedule(scheduleId: string): Promise<void> {
      try {
        await temporal().schedule.getHandle(temporalScheduleId(scheduleId)).delete();
      } catch (e) {
        if (!(e instanceof ScheduleNotFoundError)) throw e;
      }
    },
  };
}
