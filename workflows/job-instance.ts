// One execution of a job class (or code) in a group: workflow `jobinstance/<jobInstanceId>`. Its activity
// runs on the group's task queue, where the group's runners poll; whichever driver is free takes it.
// A driver that dies mid-execution makes the activity time out or fail, and it is retried on another.
import {
  ActivityFailure,
  getExternalWorkflowHandle,
  proxyActivities,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { noReadyInstanceError } from '../domain/broken-clusters';
import {
  runnerRequest,
  startedRecord,
  type JobInstanceInput,
  type JobInstanceRecord,
  type RunnerRequest,
  type RunnerResponse,
} from '../domain/group';
import { failureMessage } from '../domain/failure';
import { groupTaskQueue, groupWorkflowId } from '../domain/ids';
import { projection } from './activity-options';
import { wakeSignal } from './group';

const { projectResult, whyNoReadyInstance } = projection;

/** No runner took the activity within its schedule-to-start timeout. */
const isScheduleToStartTimeout = (err: unknown): boolean =>
  err instanceof ActivityFailure &&
  err.cause instanceof TimeoutFailure &&
  err.cause.timeoutType === 'SCHEDULE_TO_START';

/** The runner's activity (Python, runner/runner.py), called by name. */
interface RunnerActivities {
  executeJobInstance(req: RunnerRequest): Promise<RunnerResponse>;
}

export async function jobInstanceWorkflow(input: JobInstanceInput): Promise<JobInstanceRecord> {
  const record = startedRecord(input, workflowInfo().runStartTime.getTime());
  const { executeJobInstance } = proxyActivities<RunnerActivities>({
    taskQueue: groupTaskQueue(input.groupId),
    // A paused group needs a driver start (tens of seconds) before a runner polls; no schedule-to-start limit.
    startToCloseTimeout: '1h',
    // Past waitMs with no runner taking it, the execution ends with the reason (answered 409 by the API).
    ...(input.waitMs !== undefined ? { scheduleToStartTimeout: input.waitMs } : {}),
    retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 3 },
  });
  const announced = input.announce ? projectResult(record, 1) : undefined;
  const woken = input.wakeGroup
    ? getExternalWorkflowHandle(groupWorkflowId(input.groupId)).signal(wakeSignal)
    : undefined;
  const response = executeJobInstance(runnerRequest(input));
  await Promise.all([announced, woken?.catch(() => undefined)]);
  let r: RunnerResponse;
  try {
    r = await response;
  } catch (err) {
    const message = isScheduleToStartTimeout(err)
      ? noReadyInstanceError(input.waitMs!, await whyNoReadyInstance(input.groupId))
      : `the execution did not complete: ${failureMessage(err)}`;
    r = {
      result: null,
      error: { message, stackTrace: '' },
      startTime: record.startTime!,
      endTime: Date.now(),
      instanceId: '',
    };
  }
  Object.assign(record, {
    ...(r.instanceId ? { jobId: r.instanceId } : {}),
    startTime: r.startTime,
    endTime: r.endTime,
    result: r.result,
    error: r.error,
  });
  await projectResult(record, 2);
  return record;
}
