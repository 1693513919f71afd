// Single jobs (docs/api.md: Job; operations 4.16–4.20): submit starts the workflow `job/<jobId>` and writes its
// SUBMITTED record; reads come from the read model the workflow projects; cancel, stop and delete go through the
// workflow.
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import type { Document } from 'mongodb';
import { parseTags } from '../../domain/delimited';
import { jobWorkflowId, SearchAttr } from '../../domain/ids';
import { newJobRecord, singleJobDriverId, SUBMITTED_VERSION, type JobWorkflowInput } from '../../domain/job';
import type { Job, JobLogEntry } from '../../domain/resources';
import { DEFAULT_JOB_STATE_FILTER, isTerminal, JOB_STATES, JOB_TYPES, JobType } from '../../domain/states';
import { CLUSTER_UNAVAILABLE, INVALID_CLUSTER } from '../../activities/adapters/k8s/errors';
import { createProjection } from '../../activities/projection';
import { HOST_ABSENT, type DriverHost } from '../../domain/hosts';
import { logger } from '../../lib/log';
import { Collections } from '../../lib/mongo';
import { stopJobUpdate, type singleJobWorkflow } from '../../workflows/job';
import { deleteJobWorkflow, driverLogsWorkflow } from '../../workflows/ops';
import { checkUploads, discardUploads, storeUploads } from '../artifacts';
import { checkCluster } from '../clusters/quota';
import type { ApiDeps } from '../deps';
import { conflict, findOr404, unavailable, workflowUpdate } from '../errors';
import {
  arrayParam,
  enumArrayParam,
  findPage,
  intParam,
  parseListQuery,
  searchFilter,
  tagsFilter,
  type Page,
  type Query,
} from '../list';
import { toJob } from '../resources';
import type { Files } from '../routing';
import { checkMainResource, parseMaxRetries, sparkSpecOf } from '../spark-form';
import type { JobSubmitForm } from './schemas';

const log = logger('api.jobs');

/** Filters of GET /job (4.16). */
export function jobFilter(query: Query): Document {
  const states = enumArrayParam(query, 'jobStates', JOB_STATES, DEFAULT_JOB_STATE_FILTER)!;
  const types = enumArrayParam(query, 'jobTypes', JOB_TYPES);
  const clusters = arrayParam(query, 'clusterNames');
  const tags = parseTags('tags', typeof query.tags === 'string' ? query.tags : undefined);
  return {
    state: { $in: states },
    ...(types?.length ? { jobType: { $in: types } } : {}),
    ...(clusters?.length ? { clusterName: { $in: clusters } } : {}),
    ...tagsFilter(tags),
  };
}

/** Driver names a job has had: every try of a single job, or the instance's driver. */
export const driverIdsOf = (job: Job): string[] =>
  job.jobType === JobType.INTERACTIVE
    ? [`inst-${job.jobId}`]
    : Array.from({ length: job.attempt }, (_, i) => singleJobDriverId(job.jobId, i + 1));

/** Start options of a job's workflow: one workflow per job id, searchable by job, cluster and type. */
export function jobStartOptions(taskQueue: string, jobId: string, input: JobWorkflowInput) {
  return {
    workflowId: jobWorkflowId(jobId),
    taskQueue,
    args: [input] as [JobWorkflowInput],
    workflowIdConflictPolicy: 'FAIL' as const,
    searchAttributes: {
      [SearchAttr.jobId]: [jobId],
      [SearchAttr.clusterName]: [input.spec.clusterName],
      [SearchAttr.jobType]: ['SINGLE'],
      [SearchAttr.jobState]: ['SUBMITTED'],
    },
  };
}

/**
 * Writes a just-started job's SUBMITTED record (read-your-writes for the client). The job runs whether or
 * not this write succeeds: if MongoDB does not answer, the record appears with the workflow's first write.
 */
async function recordSubmitted({ store }: Pick<ApiDeps, 'store'>, job: Job): Promise<boolean> {
  try {
    await createProjection(store).projectJob(job, SUBMITTED_VERSION);
    return true;
  } catch (e) {
    log.warn('SUBMITTED record not written; the workflow writes the next one', {
      jobId: job.jobId,
      error: (e as Error).message,
    });
    return false;
  }
}

export async function getJob({ store }: Pick<ApiDeps, 'store'>, jobId: string): Promise<Job> {
  return toJob(
    await findOr404(store.col(Collections.jobs), { _id: jobId } as Document, `job '${jobId}' does not exist`),
  );
}

/** A single job that still runs: instances of a group are handled through their group. */
async function runningSingleJob(deps: ApiDeps, jobId: string, action: string): Promise<Job> {
  const job = await getJob(deps, jobId);
  if (job.jobType !== JobType.SINGLE)
    throw conflict(`job '${jobId}' is an instance of group '${job.groupId}'; ${action} it through the group`);
  if (isTerminal(job.state)) throw conflict(`job '${jobId}' is already ${job.state}`);
  return job;
}

export async function listJobs({ store, config }: ApiDeps, query: Query): Promise<Page<Job>> {
  const sortable = ['submitTime', 'startTime', 'endTime', 'jobName', 'jobId', 'state', 'jobType', 'clusterName'];
  const lq = parseListQuery(query, sortable, config.MAX_PAGE_SIZE, ['submitTime', -1], {
    name: 'jobName',
    id: 'jobId',
  });
  const filter = { ...jobFilter(query), ...searchFilter(lq.search, ['jobName', 'jobClass', 'tags']) };
  return findPage(store.col(Collections.jobs), filter, lq, toJob);
}

/** Checks the form, the main resource and the cluster's limits before anything is stored or started. */
export async function submitJob(deps: ApiDeps, body: JobSubmitForm, files: Files): Promise<{ jobId: string }> {
  const { store, temporal, config } = deps;
  try {
    checkUploads(files);
    const jobId = randomUUID().replace(/-/g, '');
    const names = {
      jars: (files.jars ?? []).map((f) => f.originalFilename),
      pyFiles: (files.pyFiles ?? []).map((f) => f.originalFilename),
    };
    const draft = sparkSpecOf(body.name, body, { jars: [], files: [], pyFiles: [] });
    checkMainResource(draft, names);
    const maxRetries = parseMaxRetries(body.maxRetries);
    const cluster = await checkCluster(store, draft);
    const spec = { ...draft, artifacts: await storeUploads(config.ARTIFACT_DIR, jobId, files) };
    // The workflow is started (durable from here on); then, side by side, the driver is launched from here
    // (launch-at-submit.ts) and the SUBMITTED record is written, so neither the launch nor the answer waits
    // for a workflow task or a worker. The workflow's own writes have higher versions.
    // A host-bound driver launched from here is on this host: the workflow launches there too (finding it).
    const host = deps.launches?.hostFor(cluster.type);
    const input: JobWorkflowInput = { spec, maxRetries, submittedAt: Date.now(), ...(host ? { host } : {}) };
    await temporal.workflow.start<typeof singleJobWorkflow>('singleJobWorkflow', {
      ...jobStartOptions(config.TASK_QUEUE, jobId, input),
    });
    const recorded = recordSubmitted(deps, newJobRecord(jobId, input, input.submittedAt!));
    deps.launches?.launch(jobId, cluster.type, input, recorded);
    await recorded;
    return { jobId };
  } finally {
    await discardUploads(files);
  }
}

export async function jobLogs(deps: ApiDeps, jobId: string, query: Query): Promise<JobLogEntry[]> {
  const { temporal, config } = deps;
  const size = intParam(query, 'logSize', 100, 0, config.LOGS_MAX_LINES);
  const from = intParam(query, 'from', 0, 0, Number.MAX_SAFE_INTEGER);
  const job = await getJob(deps, jobId);
  try {
    return await temporal.workflow.execute(driverLogsWorkflow, {
      workflowId: `logs/${job.jobId}/${randomUUID()}`,
      taskQueue: config.TASK_QUEUE,
      args: [job.clusterName, driverIdsOf(job), { from, size }, ...hostArg(deps, job)],
      workflowExecutionTimeout: '1m',
    });
  } catch (e) {
    if (e instanceof WorkflowFailedError && e.cause instanceof ApplicationFailure && e.cause.type === HOST_ABSENT)
      throw unavailable(`the logs of job '${job.jobId}' cannot be read now: ${e.cause.message}`);
    // A cluster that cannot be asked now (down, refusing the service's credentials, a client key its
    // clientKeyPassphrase does not decrypt) is not the client's fault: 503 with what its API server said, or
    // what is wrong with the cluster document (no credential is in either).
    const cause = e instanceof WorkflowFailedError ? e.cause?.cause : undefined;
    if (cause instanceof ApplicationFailure && (cause.type === CLUSTER_UNAVAILABLE || cause.type === INVALID_CLUSTER))
      throw unavailable(`the logs of job '${job.jobId}' cannot be read now: ${cause.message}`);
    throw e;
  }
}

export async function cancelJob(deps: ApiDeps, jobId: string): Promise<void> {
  const job = await runningSingleJob(deps, jobId, 'cancel');
  try {
    await deps.temporal.workflow.getHandle(jobWorkflowId(job.jobId)).cancel();
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) throw conflict(`job '${job.jobId}' is no longer running`);
    throw e;
  }
}

export async function stopJob(deps: ApiDeps, jobId: string): Promise<void> {
  const job = await runningSingleJob(deps, jobId, 'stop');
  await workflowUpdate(
    () => deps.temporal.workflow.getHandle(jobWorkflowId(job.jobId)).executeUpdate(stopJobUpdate),
    () => conflict(`job '${job.jobId}' is no longer running`),
  );
}

/** Only a single job that has ended may go; an instance goes with its group. */
export async function deleteJob(deps: ApiDeps, jobId: string): Promise<void> {
  const job = await getJob(deps, jobId);
  if (job.jobType !== JobType.SINGLE)
    throw conflict(`job '${job.jobId}' is an instance of group '${job.groupId}'; it goes with the group`);
  if (!isTerminal(job.state))
    throw conflict(`job '${job.jobId}' is ${job.state}; cancel or stop it before deleting it`);
  try {
    await deps.temporal.workflow.execute(deleteJobWorkflow, {
      workflowId: `delete/${jobWorkflowId(job.jobId)}`,
      taskQueue: deps.config.TASK_QUEUE,
      args: [job.jobId, job.clusterName, driverIdsOf(job), ...hostArg(deps, job)],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowExecutionTimeout: '2m',
    });
  } catch (e) {
    if (e instanceof WorkflowFailedError && e.cause instanceof ApplicationFailure && e.cause.type === HOST_ABSENT)
      throw unavailable(`job '${job.jobId}' cannot be deleted now: ${e.cause.message}`);
    throw e;
  }
}

/** The host that owns a job's drivers (local clusters), as the short workflows on them take it; none: no argument. */
const hostArg = (deps: ApiDeps, job: Job): [DriverHost] | [] =>
  job.host ? [{ id: job.host, absentMs: deps.config.HOST_ABSENT_MS }] : [];
