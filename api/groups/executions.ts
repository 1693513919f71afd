// Executions in a group (docs/api.md: Job instance result; operations 4.5–4.7): each is a short workflow `jobinstance/<id>` that waits
// for a free driver of the group, runs the job class or code there and records the result.
import { randomUUID } from 'node:crypto';
import { NO_READY_INSTANCE } from '../../domain/broken-clusters';
import type { JobInstanceInput, JobInstanceRecord } from '../../domain/group';
import { jobInstanceWorkflowId } from '../../domain/ids';
import type { JobInstanceResult } from '../../domain/resources';
import { GroupKind, GroupState, Language } from '../../domain/states';
import { Collections } from '../../lib/mongo';
import { jobInstanceWorkflow } from '../../workflows/job-instance';
import type { ApiDeps } from '../deps';
import { conflict } from '../errors';
import { findPage, parseListQuery, searchFilter, type Page } from '../list';
import { toResult } from '../resources';
import type { ExecuteBody } from './schemas';
import { getGroupDoc } from './service';

type Query = Record<string, string | string[] | undefined>;

/** The workflow input of an execution; refuses archived groups and a type the group's kind does not run. */
async function executionOf(
  deps: ApiDeps,
  groupId: string,
  body: ExecuteBody,
  announce: boolean,
): Promise<JobInstanceInput> {
  const g = await getGroupDoc(deps, groupId);
  if (g.state === GroupState.ARCHIVED) throw conflict(`group '${g.name}' is archived; it takes no executions`);
  if (g.paused === true) {
    throw conflict(`group '${g.name}' is paused; resume it (POST /group/${g.id}/resume) to run executions`);
  }
  if (body.type === 'interactive_code_execute') {
    if (g.kind !== GroupKind.CODE)
      throw conflict(`type: group '${g.name}' is of kind ${g.kind}; interactive_code_execute needs a CODE group`);
    if (body.code === undefined) throw conflict('code: interactive_code_execute needs the code to run');
  } else if (!body.jobClass) {
    const form =
      g.language === Language.PYTHON ? 'module.Class' : 'the fully qualified name of a cloud.ilum.job.Job class';
    throw conflict(`jobClass: interactive_job_execute needs the job class to run, as ${form}`);
  }
  return {
    jobInstanceId: randomUUID().replace(/-/g, ''),
    groupId,
    groupName: g.name,
    clusterName: g.clusterName,
    tagMap: g.tagMap ?? {},
    type: body.type,
    ...(body.jobClass ? { jobClass: body.jobClass } : {}),
    ...(body.code !== undefined ? { code: body.code } : {}),
    jobConfig: body.jobConfig,
    wakeGroup: g.autoPause === true,
    announce,
    waitMs: deps.config.EXECUTE_WAIT_MS,
  };
}

const startOptions = (deps: ApiDeps, input: JobInstanceInput) => ({
  workflowId: jobInstanceWorkflowId(input.jobInstanceId),
  taskQueue: deps.config.TASK_QUEUE,
  args: [input] as [JobInstanceInput],
});

/** Runs an execution and waits for its result (4.5). */
export async function executeInGroup(deps: ApiDeps, groupId: string, body: ExecuteBody): Promise<JobInstanceResult> {
  const input = await executionOf(deps, groupId, body, false);
  const record: JobInstanceRecord = await deps.temporal.workflow.execute(
    jobInstanceWorkflow,
    startOptions(deps, input),
  );
  // No instance took it within EXECUTE_WAIT_MS: the group cannot run it now, and the message says why.
  if (record.error?.message.startsWith(NO_READY_INSTANCE)) throw conflict(record.error.message);
  return toResult(record);
}

/**
 * Starts an execution without waiting (4.7); its record is written first, so a read finds it at once.
 * `queue`: wait behind the instance's other executions however long they take, instead of EXECUTE_WAIT_MS
 * (Livy's statements, which a session runs one after another).
 */
export async function submitToGroup(
  deps: ApiDeps,
  groupId: string,
  body: ExecuteBody,
  opts: { queue?: boolean } = {},
): Promise<{ jobInstanceId: string }> {
  const executed = await executionOf(deps, groupId, body, true);
  const input = opts.queue ? { ...executed, waitMs: undefined } : executed;
  await deps.temporal.workflow.start(jobInstanceWorkflow, startOptions(deps, input));
  return { jobInstanceId: input.jobInstanceId };
}

export async function listResults(deps: ApiDeps, groupId: string, query: Query): Promise<Page<JobInstanceResult>> {
  await getGroupDoc(deps, groupId);
  const lq = parseListQuery(query, ['startTime', 'endTime', 'jobClass'], deps.config.MAX_PAGE_SIZE, ['startTime', -1]);
  const filter = { groupId, ...searchFilter(lq.search, ['jobClass', 'result']) };
  return findPage(deps.store.col(Collections.results), filter, lq, toResult);
}
