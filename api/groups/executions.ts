// Executions in a group (docs/api.md: Job instance result; operations 4.5–4.7). A synchronous one goes
// straight to a READY driver of the group when one listens (direct.ts), and its result is recorded here;
// otherwise, and for every asynchronous one, it is a short workflow `jobinstance/<id>` that waits for a
// free driver of the group, runs the job class or code there and records the result.
import { randomUUID } from 'node:crypto';
import { NO_READY_INSTANCE } from '../../domain/broken-clusters/no-ready-instance';
import { runnerRequest, startedRecord, type JobInstanceInput, type JobInstanceRecord } from '../../domain/group';
import { groupWorkflowId, jobInstanceWorkflowId } from '../../domain/ids';
import type { JobInstanceResult } from '../../domain/resources';
import { GroupKind, GroupState, Language } from '../../domain/states';
import { createProjection } from '../../activities/projection';
import { logger } from '../../lib/log';
import { Collections } from '../../lib/mongo';
import { wakeSignal } from '../../workflows/group';
import { jobInstanceWorkflow } from '../../workflows/job-instance';
import type { ApiDeps } from '../deps';
import { conflict } from '../errors';
import { findPage, parseListQuery, searchFilter, type Page, type Query } from '../list';
import { toResult } from '../resources';
import { directChannel } from './direct';
import type { ExecuteBody } from './schemas';
import { getGroupDoc, getRecentGroupDoc } from './reads';

/** The workflow input of an execution; refuses archived groups and a type the group's kind does not run. */
async function executionOf(
  deps: ApiDeps,
  groupId: string,
  body: ExecuteBody,
  announce: boolean,
): Promise<JobInstanceInput> {
  const g = await getRecentGroupDoc(deps, groupId);
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

/** Runs an execution and waits for its result (4.5): directly on a driver when one listens, else by workflow. */
export async function executeInGroup(deps: ApiDeps, groupId: string, body: ExecuteBody): Promise<JobInstanceResult> {
  const input = await executionOf(deps, groupId, body, false);
  const direct = await executeDirect(deps, input);
  if (direct) return direct;
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

const log = logger('api.executions');

/** Result writes of direct executions not yet acknowledged, per group (GET results waits for them). */
const pendingWrites = new Map<string, Set<Promise<unknown>>>();
/** When each autoPause group was last told it is in use. */
const lastWake = new Map<string, number>();

/** The execution over the direct channel; undefined when no driver could take it. */
async function executeDirect(deps: ApiDeps, input: JobInstanceInput): Promise<JobInstanceResult | undefined> {
  const r = await directChannel(deps).execute(input.groupId, runnerRequest(input));
  if (!r) return undefined;
  // The same record the workflow path writes, so GET results, both result streams and metrics see it.
  const record: JobInstanceRecord = {
    ...startedRecord(input, r.startTime),
    ...(r.instanceId ? { jobId: r.instanceId } : {}),
    endTime: r.endTime,
    result: r.result,
    error: r.error,
  };
  const written = recordResult(deps, record);
  if (input.wakeGroup) touchGroup(deps, input.groupId);
  // The answer waits for the result's record (one durable write), so an API killed right after answering
  // leaves no answered execution without its record; but never past RESULT_WRITE_WAIT_MS: with MongoDB down
  // the caller still gets the result it ran for (not an error it would retry), and the write goes on.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([written, new Promise((r) => (timer = setTimeout(r, RESULT_WRITE_WAIT_MS)))]);
  clearTimeout(timer);
  return toResult(record);
}

/** Longest a direct execution's answer waits for its result's record. */
const RESULT_WRITE_WAIT_MS = 2_000;

/** Writes the result (errors logged, never thrown); a GET results of the group meanwhile waits for it. */
function recordResult(deps: ApiDeps, record: JobInstanceRecord): Promise<unknown> {
  const writes = pendingWrites.get(record.groupId) ?? new Set();
  pendingWrites.set(record.groupId, writes);
  const write = createProjection(deps.store)
    .projectResult(record, 2)
    .catch((e: unknown) =>
      log.error('result of a direct execution not recorded', {
        jobInstanceId: record.jobInstanceId,
        error: (e as Error).message,
      }),
    )
    .finally(() => {
      writes.delete(write);
      if (writes.size === 0 && pendingWrites.get(record.groupId) === writes) pendingWrites.delete(record.groupId);
    });
  writes.add(write);
  return write;
}

/** Tells an autoPause group it is in use (its idle clock), at most every tenth of its idle time. */
function touchGroup(deps: ApiDeps, groupId: string): void {
  const now = Date.now();
  const every = Math.min(10_000, deps.config.GROUP_IDLE_PAUSE_MS / 10);
  if (now - (lastWake.get(groupId) ?? 0) < every) return;
  lastWake.set(groupId, now);
  deps.temporal.workflow
    .getHandle(groupWorkflowId(groupId))
    .signal(wakeSignal)
    .catch((e: unknown) => log.warn('wake signal not delivered', { groupId, error: (e as Error).message }));
}

export async function listResults(deps: ApiDeps, groupId: string, query: Query): Promise<Page<JobInstanceResult>> {
  await getGroupDoc(deps, groupId);
  await Promise.all(pendingWrites.get(groupId) ?? []);
  const lq = parseListQuery(query, ['startTime', 'endTime', 'jobClass'], deps.config.MAX_PAGE_SIZE, ['startTime', -1]);
  const filter = { groupId, ...searchFilter(lq.search, ['jobClass', 'result']) };
  return findPage(deps.store.col(Collections.results), filter, lq, toResult);
}
