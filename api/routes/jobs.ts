// Single jobs (spec §2.4, §4.16–4.20): submit starts the workflow `job/<jobId>`; reads come from the
// read model the workflow projects; cancel, stop and delete go through the workflow.
import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Document } from 'mongodb';
import { z } from 'zod';
import { parseTags } from '../../domain/delimited';
import { jobWorkflowId, SearchAttr } from '../../domain/ids';
import { singleJobDriverId, type JobWorkflowInput } from '../../domain/job';
import { DEFAULT_JOB_STATE_FILTER, isTerminal, JOB_STATES, JOB_TYPES, JobType } from '../../domain/states';
import type { Job } from '../../domain/types';
import { Collections } from '../../lib/mongo';
import type { singleJobWorkflow } from '../../workflows/job';
import { acceptedUpdate, stopJobUpdate } from '../../workflows/job';
import { deleteJobWorkflow, driverLogsWorkflow } from '../../workflows/ops';
import type { ApiDeps } from '../app';
import { checkUploads, discardUploads, storeUploads } from '../artifacts';
import { conflict, notFound, workflowUpdate } from '../errors';
import { arrayParam, enumArrayParam, findPage, intParam, parseListQuery, resourceOf, searchFilter, tagsFilter } from '../list';
import { LIST_QUERY, route } from '../routing';
import { IdResponse, MemorySettings, name, PageOf } from '../schemas';
import { checkCluster, checkMainResource, parseMaxRetries, sparkFormFields, sparkSpecOf } from '../spark-form';

export const JobSchema = z.object({
  jobId: z.string(),
  groupId: z.string().optional(),
  scheduleId: z.string().optional(),
  jobName: z.string(),
  jobType: z.enum(JOB_TYPES),
  tags: z.string(),
  language: z.string(),
  jobClass: z.string().optional(),
  clusterName: z.string(),
  jobConfig: z.string(),
  args: z.array(z.string()),
  pyRequirements: z.string(),
  packages: z.string(),
  appId: z.string().optional(),
  state: z.enum(JOB_STATES),
  error: z.string().optional(),
  submitTime: z.number().int(),
  startTime: z.number().int().optional(),
  endTime: z.number().int().optional(),
  maxRetries: z.number().int(),
  attempt: z.number().int(),
  memorySettings: MemorySettings,
});

const JobLogEntrySchema = z.object({
  name: z.string(),
  type: z.string(),
  role: z.string(),
  state: z.string(),
  from: z.number().int(),
  logSize: z.number().int(),
  fileName: z.string(),
  log: z.array(z.string()),
});

export const JobSubmitForm = z
  .object({
    name,
    ...sparkFormFields,
    maxRetries: z.string().optional(),
  })
  .strict();

/** The read-model document → the Job resource (internal fields dropped). */
export const toJob = (d: Document): Job => resourceOf<Job>(d);

/** Filters of GET /job (4.16), shared by group and schedule `jobs` lists. */
export function jobFilter(query: Record<string, string | string[] | undefined>): Document {
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

export const jobRoutes = ({ store, temporal, config }: ApiDeps) => {
  const jobs = store.col(Collections.jobs);
  const getJob = async (jobId: string): Promise<Job> => {
    const d = await jobs.findOne({ _id: jobId } as Document);
    if (!d) throw notFound(`job '${jobId}' does not exist`);
    return toJob(d);
  };
  const singleJob = async (jobId: string, action: string): Promise<Job> => {
    const job = await getJob(jobId);
    if (job.jobType !== JobType.SINGLE) throw conflict(`job '${jobId}' is an instance of group '${job.groupId}'; ${action} it through the group`);
    if (isTerminal(job.state)) throw conflict(`job '${jobId}' is already ${job.state}`);
    return job;
  };

  return [
    route({
      method: 'post',
      path: '/job/submit',
      tag: 'jobs',
      summary: 'Submit a single job (4.19)',
      body: { kind: 'form', schema: JobSubmitForm, files: ['jars', 'files', 'pyFiles'] },
      response: IdResponse('jobId'),
      errors: [400, 402, 404, 409],
      handler: async ({ body, files }) => {
        try {
          checkUploads(files);
          const jobId = randomUUID().replace(/-/g, '');
          const names = { jars: (files.jars ?? []).map((f) => f.originalFilename), pyFiles: (files.pyFiles ?? []).map((f) => f.originalFilename) };
          const draft = sparkSpecOf(body.name, body, { jars: [], files: [], pyFiles: [] });
          checkMainResource(draft, names);
          const maxRetries = parseMaxRetries(body.maxRetries);
          await checkCluster(store, draft);
          const spec = { ...draft, artifacts: await storeUploads(config.ARTIFACT_DIR, jobId, files) };
          const input: JobWorkflowInput = { spec, maxRetries };
          await temporal.workflow.executeUpdateWithStart(acceptedUpdate, {
            startWorkflowOperation: new WithStartWorkflowOperation<typeof singleJobWorkflow>('singleJobWorkflow', {
              workflowId: jobWorkflowId(jobId),
              taskQueue: config.TASK_QUEUE,
              args: [input],
              workflowIdConflictPolicy: 'FAIL',
              searchAttributes: { [SearchAttr.jobId]: [jobId], [SearchAttr.clusterName]: [spec.clusterName], [SearchAttr.jobType]: ['SINGLE'] },
            }),
          });
          return { jobId };
        } finally {
          await discardUploads(files);
        }
      },
    }),
    route({
      method: 'get',
      path: '/job',
      tag: 'jobs',
      summary: 'List jobs (4.16)',
      query: [
        ...LIST_QUERY,
        { name: 'jobTypes', description: 'SINGLE, INTERACTIVE, SHELL', array: true },
        { name: 'jobStates', description: 'default SUBMITTED, STARTING, READY, BUSY', array: true },
        { name: 'clusterNames', description: 'cluster names', array: true },
        { name: 'tags', description: 'key1=value1;key2=value2' },
      ],
      response: PageOf(JobSchema),
      errors: [409],
      handler: async ({ query }) => {
        const lq = parseListQuery(query, ['submitTime', 'startTime', 'endTime', 'jobName', 'state', 'jobType', 'clusterName'], config.MAX_PAGE_SIZE, ['submitTime', -1]);
        return findPage(jobs, { ...jobFilter(query), ...searchFilter(lq.search, ['jobName', 'jobClass', 'tags']) }, lq, toJob);
      },
    }),
    route({
      method: 'get',
      path: '/job/:jobId',
      tag: 'jobs',
      summary: 'Get a job by id (4.17)',
      response: JobSchema,
      errors: [404],
      handler: async ({ params }) => getJob(params.jobId),
    }),
    route({
      method: 'get',
      path: '/job/:jobId/logs',
      tag: 'jobs',
      summary: 'Logs of all resources of a job (4.18)',
      query: [
        { name: 'logSize', description: `maximum number of lines per resource (default 100, at most LOGS_MAX_LINES = ${config.LOGS_MAX_LINES})` },
        { name: 'from', description: 'offset from the start of each log (default 0)' },
      ],
      response: z.array(JobLogEntrySchema),
      errors: [404, 409],
      handler: async ({ params, query }) => {
        const size = intParam(query, 'logSize', 100, 0, config.LOGS_MAX_LINES);
        const from = intParam(query, 'from', 0, 0, Number.MAX_SAFE_INTEGER);
        const job = await getJob(params.jobId);
        return temporal.workflow.execute(driverLogsWorkflow, {
          workflowId: `logs/${job.jobId}/${randomUUID()}`,
          taskQueue: config.TASK_QUEUE,
          args: [job.clusterName, driverIdsOf(job), { from, size }],
          workflowExecutionTimeout: '1m',
        });
      },
    }),
    route({
      method: 'post',
      path: '/job/:jobId/cancel',
      tag: 'jobs',
      summary: 'Cancel a job: its driver is removed and the job ends CANCELED',
      errors: [404, 409],
      handler: async ({ params }) => {
        const job = await singleJob(params.jobId, 'cancel');
        try {
          await temporal.workflow.getHandle(jobWorkflowId(job.jobId)).cancel();
        } catch (e) {
          if (e instanceof WorkflowNotFoundError) throw conflict(`job '${job.jobId}' is no longer running`);
          throw e;
        }
      },
    }),
    route({
      method: 'post',
      path: '/job/:jobId/stop',
      tag: 'jobs',
      summary: 'Stop a job: its driver is removed and the job ends FINISHED',
      errors: [404, 409],
      handler: async ({ params }) => {
        const job = await singleJob(params.jobId, 'stop');
        await workflowUpdate(
          () => temporal.workflow.getHandle(jobWorkflowId(job.jobId)).executeUpdate(stopJobUpdate),
          () => conflict(`job '${job.jobId}' is no longer running`),
        );
      },
    }),
    route({
      method: 'delete',
      path: '/job/:jobId',
      tag: 'jobs',
      summary: 'Delete a finished, failed or cancelled job with its driver files',
      errors: [404, 409],
      handler: async ({ params }) => {
        const job = await getJob(params.jobId);
        if (job.jobType !== JobType.SINGLE) throw conflict(`job '${job.jobId}' is an instance of group '${job.groupId}'; it goes with the group`);
        if (!isTerminal(job.state)) throw conflict(`job '${job.jobId}' is ${job.state}; cancel or stop it before deleting it`);
        await temporal.workflow.execute(deleteJobWorkflow, {
          workflowId: `delete/${jobWorkflowId(job.jobId)}`,
          taskQueue: config.TASK_QUEUE,
          args: [job.jobId, job.clusterName, driverIdsOf(job)],
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowExecutionTimeout: '2m',
        });
      },
    }),
  ];
};
