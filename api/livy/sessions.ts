// Livy sessions and statements over the main API's services: a session is a CODE group of scale 1
// (pyspark and sql: PYTHON, spark: SCALA), a statement an execution (interactive_code_execute) in it.
// Nothing here holds state of its own beyond the id mapping (ids.ts).
import type { Document } from 'mongodb';
import { jobInstanceWorkflowId } from '../../domain/ids';
import type { Job, JobInstanceResult } from '../../domain/resources';
import { GroupKind, JobState } from '../../domain/states';
import { logger } from '../../lib/log';
import { Collections } from '../../lib/mongo';
import { discardUploads } from '../artifacts';
import type { ApiDeps } from '../deps';
import { ApiError, badRequest } from '../errors';
import { submitToGroup } from '../groups/executions';
import { GroupCreateForm } from '../groups/schemas';
import { getGroupDoc } from '../groups/reads';
import { archiveGroup, createGroup } from '../groups/service';
import { jobLogs } from '../jobs/service';
import { toJob, toResult } from '../resources';
import { apiBaseUrl, livyAppInfo } from '../spark-ui/links';
import { stageFiles } from './files';
import {
  findSession,
  findStatement,
  insertRecord,
  listRecords,
  markRecord,
  nextId,
  sessionKey,
  sessionStatements,
  statementKey,
  type SessionRecord,
  type StatementRecord,
} from './ids';
import { sparkFormOf, type SessionCreate, type StatementCreate } from './schemas';
import { logPage, sessionState, SESSION_KINDS, sqlAsPython, statementKindOf, statementView } from './shapes';

const log = logger('livy');

/** A group or job that left the read model reads as absent; any other failure stays one. */
export const gone = (e: unknown): undefined => {
  if (e instanceof ApiError && e.status === 404) return undefined;
  throw e;
};
const LIVE = [JobState.SUBMITTED, JobState.STARTING, JobState.READY, JobState.BUSY, JobState.UNKNOWN];

/** The group's instances that still run, newest first. */
async function liveInstances(deps: ApiDeps, groupId: string): Promise<Job[]> {
  const docs = await deps.store
    .col(Collections.jobs)
    .find({ groupId, state: { $in: LIVE } })
    .sort({ submitTime: -1 })
    .toArray();
  return docs.map(toJob);
}

/** Livy's Session object. */
async function sessionView(deps: ApiDeps, s: SessionRecord) {
  const group = await getGroupDoc(deps, s.groupId).catch(gone);
  const instances = group ? await liveInstances(deps, s.groupId) : [];
  return {
    id: s.id,
    name: s.name,
    appId: instances.find((j) => j.appId)?.appId ?? null,
    owner: null,
    proxyUser: s.proxyUser,
    state: group
      ? sessionState(
          group as { state: string; paused?: boolean },
          instances.map((j) => j.state),
        )
      : 'dead',
    kind: s.kind,
    appInfo: livyAppInfo(apiBaseUrl(deps), instances[0]),
    log: [] as string[],
  };
}

export async function listSessions(deps: ApiDeps, from: number, size: number) {
  const { total, items } = await listRecords<SessionRecord>(deps.store, 'session', from, size);
  return { from, total, sessions: await Promise.all(items.map((s) => sessionView(deps, s))) };
}

export async function getSession(deps: ApiDeps, rawId: string) {
  return sessionView(deps, await findSession(deps.store, rawId));
}

export async function sessionStateOf(deps: ApiDeps, rawId: string) {
  const v = await getSession(deps, rawId);
  return { id: v.id, state: v.state };
}

/** Starts the session's group (its files copied from LIVY_LOCAL_DIRS) and records the new id. */
export async function createSession(deps: ApiDeps, body: SessionCreate) {
  const kind = body.kind ?? 'pyspark';
  const files = await stageFiles(deps.config, {
    jars: body.jars ?? [],
    pyFiles: body.pyFiles ?? [],
    files: body.files ?? [],
  });
  try {
    const id = await nextId(deps.store, 'session');
    const name = body.name?.trim() || `livy-session-${id}`;
    const form = GroupCreateForm.parse({
      ...sparkFormOf(body),
      name,
      kind: GroupKind.CODE,
      language: SESSION_KINDS[kind],
      scale: '1',
    });
    const { groupId } = await createGroup(deps, form, files);
    const record: SessionRecord = {
      _id: sessionKey(id),
      type: 'session',
      id,
      groupId,
      kind,
      name,
      proxyUser: body.proxyUser ?? null,
      createdTime: Date.now(),
    };
    await insertRecord(deps.store, record);
    return sessionView(deps, record);
  } finally {
    // Copies the group did not take (a refused request).
    await discardUploads(files);
  }
}

/** Stops the session's drivers (the group is archived and stays in the main API's history). */
export async function deleteSession(deps: ApiDeps, rawId: string) {
  const s = await findSession(deps.store, rawId);
  try {
    await archiveGroup(deps, s.groupId);
  } catch (e) {
    // Archived already, or gone: either way the session is over.
    if (!(e instanceof ApiError)) throw e;
  }
  await markRecord(deps.store, sessionKey(s.id), { deleted: true });
  return { msg: 'deleted' };
}

/** Livy's session log: the driver log of the session's newest instance. */
export async function sessionLog(deps: ApiDeps, rawId: string, from?: number, size?: number) {
  const s = await findSession(deps.store, rawId);
  const newest = await deps.store
    .col(Collections.jobs)
    .find({ groupId: s.groupId })
    .sort({ submitTime: -1 })
    .limit(1)
    .toArray();
  const lines = newest.length ? await driverLines(deps, String(newest[0]._id)) : [];
  return { id: s.id, ...logPage(lines, from, size) };
}

/** Every line (up to LOGS_MAX_LINES) of a job's newest driver. */
export async function driverLines(deps: ApiDeps, jobId: string): Promise<string[]> {
  const entries = await jobLogs(deps, jobId, { from: '0', logSize: String(deps.config.LOGS_MAX_LINES) });
  const drivers = entries.filter((e) => e.role === 'driver');
  return (drivers.at(-1) ?? entries.at(-1))?.log ?? [];
}

async function resultsOf(deps: ApiDeps, ids: string[]): Promise<Map<string, JobInstanceResult>> {
  const docs = await deps.store
    .col(Collections.results)
    .find({ jobInstanceId: { $in: ids } } as Document)
    .toArray();
  return new Map(docs.map((d) => [d.jobInstanceId as string, toResult(d)]));
}

const viewOf = async (deps: ApiDeps, st: StatementRecord) =>
  statementView(st, (await resultsOf(deps, [st.jobInstanceId])).get(st.jobInstanceId));

export async function listStatements(deps: ApiDeps, rawId: string) {
  const s = await findSession(deps.store, rawId);
  const list = await sessionStatements(deps.store, s.id);
  const results = await resultsOf(
    deps,
    list.map((st) => st.jobInstanceId),
  );
  return {
    total_statements: list.length,
    statements: list.map((st) => statementView(st, results.get(st.jobInstanceId))),
  };
}

export async function getStatement(deps: ApiDeps, rawId: string, rawStatementId: string) {
  const s = await findSession(deps.store, rawId);
  return viewOf(deps, await findStatement(deps.store, s.id, rawStatementId));
}

/** Submits the code to the session's group; `sql` runs through spark.sql and answers application/json. */
export async function runStatement(deps: ApiDeps, rawId: string, body: StatementCreate) {
  const s = await findSession(deps.store, rawId);
  let kind;
  try {
    kind = statementKindOf(s.kind, body.kind ?? undefined);
  } catch (e) {
    throw badRequest(`kind: ${(e as Error).message}`);
  }
  const code = kind === 'sql' ? sqlAsPython(body.code) : body.code;
  // Numbered before submitting, so ids follow the order executions are queued in.
  const id = await nextId(deps.store, `statement:${s.id}`);
  // Queued as Livy queues them: behind the session's running statement, however long it takes.
  const { jobInstanceId } = await submitToGroup(
    deps,
    s.groupId,
    { type: 'interactive_code_execute', code, jobConfig: {} },
    { queue: true },
  );
  const record: StatementRecord = {
    _id: statementKey(s.id, id),
    type: 'statement',
    sessionId: s.id,
    id,
    jobInstanceId,
    code: body.code,
    kind,
  };
  await insertRecord(deps.store, record);
  return viewOf(deps, record);
}

/** Cancels the execution's workflow; a statement that has finished stays as it is. */
export async function cancelStatement(deps: ApiDeps, rawId: string, rawStatementId: string) {
  const s = await findSession(deps.store, rawId);
  const st = await findStatement(deps.store, s.id, rawStatementId);
  const r = (await resultsOf(deps, [st.jobInstanceId])).get(st.jobInstanceId);
  if (r?.endTime === undefined) {
    await markRecord(deps.store, statementKey(s.id, st.id), { cancelled: true });
    await deps.temporal.workflow
      .getHandle(jobInstanceWorkflowId(st.jobInstanceId))
      .cancel()
      .catch((e: unknown) => log.warn('statement cancel', { err: e }));
  }
  return { msg: 'canceled' };
}
