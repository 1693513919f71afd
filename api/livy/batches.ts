// Livy batches over the main API's single jobs: `file` is the main program (a .py: PYTHON, a .jar with
// `className`: SCALA), copied with the other named files from LIVY_LOCAL_DIRS and submitted as a job.
import path from 'node:path';
import { isTerminal, Language, type JobState } from '../../domain/states';
import { discardUploads } from '../artifacts';
import type { ApiDeps } from '../deps';
import { ApiError, badRequest } from '../errors';
import { JobSubmitForm } from '../jobs/schemas';
import { cancelJob, getJob, submitJob } from '../jobs/service';
import { apiBaseUrl, livyAppInfo } from '../spark-ui/links';
import { stageFiles } from './files';
import { batchKey, findBatch, insertRecord, listRecords, markRecord, nextId, type BatchRecord } from './ids';
import { argsField, sparkFormOf, type BatchCreate } from './schemas';
import { batchState, logPage } from './shapes';
import { driverLines, gone } from './sessions';

/** Livy's Batch object; a job that left the read model reads as dead. */
async function batchView(deps: ApiDeps, b: BatchRecord) {
  const job = await getJob(deps, b.jobId).catch(gone);
  return {
    id: b.id,
    name: b.name,
    owner: null,
    proxyUser: b.proxyUser,
    state: job ? batchState(job.state) : 'dead',
    appId: job?.appId ?? null,
    appInfo: livyAppInfo(apiBaseUrl(deps), job),
    log: [] as string[],
  };
}

export async function listBatches(deps: ApiDeps, from: number, size: number) {
  const { total, items } = await listRecords<BatchRecord>(deps.store, 'batch', from, size);
  return { from, total, sessions: await Promise.all(items.map((b) => batchView(deps, b))) };
}

export async function getBatch(deps: ApiDeps, rawId: string) {
  return batchView(deps, await findBatch(deps.store, rawId));
}

export async function batchStateOf(deps: ApiDeps, rawId: string) {
  const v = await getBatch(deps, rawId);
  return { id: v.id, state: v.state };
}

/** The language and main class of a batch from its main file. */
function mainOf(body: BatchCreate): { language: Language; jobClass: string } {
  const base = path.basename(body.file.replace(/^[a-z]+:/, ''));
  if (base.endsWith('.py')) return { language: Language.PYTHON, jobClass: base.slice(0, -'.py'.length) };
  if (base.endsWith('.jar')) {
    if (!body.className) throw badRequest('className: a .jar batch needs the main class to run');
    return { language: Language.SCALA, jobClass: body.className };
  }
  throw badRequest(`file: '${body.file}' is neither a .py nor a .jar file`);
}

/** Files are checked before an id is taken, so a refused request leaves no gap in the ids. */
export async function createBatch(deps: ApiDeps, body: BatchCreate) {
  const main = mainOf(body);
  const mainField = main.language === Language.PYTHON ? 'pyFiles' : 'jars';
  const refs = { jars: body.jars ?? [], pyFiles: body.pyFiles ?? [], files: body.files ?? [] };
  refs[mainField] = [body.file, ...refs[mainField]];
  const files = await stageFiles(deps.config, refs);
  try {
    const id = await nextId(deps.store, 'batch');
    const name = body.name?.trim() || `livy-batch-${id}`;
    const form = JobSubmitForm.parse({
      ...sparkFormOf(body),
      name,
      language: main.language,
      jobClass: main.jobClass,
      args: argsField(body.args),
    });
    const { jobId } = await submitJob(deps, form, files);
    const record: BatchRecord = {
      _id: batchKey(id),
      type: 'batch',
      id,
      jobId,
      name,
      proxyUser: body.proxyUser ?? null,
      createdTime: Date.now(),
    };
    await insertRecord(deps.store, record);
    return batchView(deps, record);
  } finally {
    // Copies the job did not take (a refused request).
    await discardUploads(files);
  }
}

/** Kills a running batch (its job is canceled) and forgets its id; the job stays in the main API. */
export async function deleteBatch(deps: ApiDeps, rawId: string) {
  const b = await findBatch(deps.store, rawId);
  const job = await getJob(deps, b.jobId).catch(gone);
  if (job && !isTerminal(job.state as JobState)) {
    try {
      await cancelJob(deps, b.jobId);
    } catch (e) {
      // It ended meanwhile.
      if (!(e instanceof ApiError)) throw e;
    }
  }
  await markRecord(deps.store, batchKey(b.id), { deleted: true });
  return { msg: 'deleted' };
}

export async function batchLog(deps: ApiDeps, rawId: string, from?: number, size?: number) {
  const b = await findBatch(deps.store, rawId);
  const lines = (await getJob(deps, b.jobId).catch(gone)) ? await driverLines(deps, b.jobId) : [];
  return { id: b.id, ...logPage(lines, from, size) };
}
