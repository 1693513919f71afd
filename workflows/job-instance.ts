// One execution of a job class (or code) in a group: workflow `jobinstance/<jobInstanceId>`. Its activity
// runs on the group's task queue, where the group's runners poll; whichever driver is free takes it.
// A driver that dies mid-execution makes the activity time out or fail, and it is retried on another.
import { ActivityFailure, getExternalWorkflowHandle, TimeoutFailure, workflowInfo } from '@temporalio/workflow';
import { noReadyInstanceError } from '../domain/broken-clusters/no-ready-instance';
import {
  runnerRequest,
  startedRecord,
  type JobInstanceInput,
  type JobInstanceRecord,
  type RunnerResponse,
} from '../domain/group';
import { failureMessage } from '../domain/failure';
import { groupWorkflowId } from '../domain/ids';
import { projection, runner } from './activity-options';
import { wakeSignal } from './group';

const { projectResult, whyNoReadyInstance } = projection;

/** No runner took the activity within its schedule-to-start timeout. */
const isScheduleToStartTimeout = (err: unknown): boolean =>
  err instanceof ActivityFailure &&
  err.cause instanceof TimeoutFailure &&
  err.cause.timeoutType === 'SCHEDULE_TO_START';

export async function jobInstanceWorkflow(input: JobInstanceInput): Promise<JobInstanceRecord> {
  const record = startedRecord(input, workflowInfo().runStartTime.getTime());
  const { executeJobInstance } = runner(input.groupId, input.waitMs);
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
