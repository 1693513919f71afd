// Single-job endpoints (4.16–4.20): parse, call the service, answer.
import { z } from 'zod';
import { Job, JobLogEntry } from '../../domain/resources';
import type { ApiDeps } from '../deps';
import { IdResponse, PageOf } from '../resources';
import { LIST_QUERY, route } from '../routing';
import { JobSubmitForm } from './schemas';
import { cancelJob, deleteJob, getJob, jobLogs, listJobs, stopJob, submitJob } from './service';

export const jobRoutes = (deps: ApiDeps) => [
  route({
    method: 'post',
    path: '/job/submit',
    role: 'operator',
    tag: 'jobs',
    summary: 'Submit a single job (4.19)',
    body: { kind: 'form', schema: JobSubmitForm, files: ['jars', 'files', 'pyFiles'] },
    response: IdResponse('jobId'),
    errors: [400, 402, 404, 409],
    handler: ({ body, files }) => submitJob(deps, body, files),
  }),
  route({
    method: 'get',
    path: '/job',
    role: 'viewer',
    tag: 'jobs',
    summary: 'List jobs (4.16)',
    query: [
      ...LIST_QUERY,
      { name: 'jobTypes', description: 'SINGLE, INTERACTIVE, SHELL', array: true },
      { name: 'jobStates', description: 'default SUBMITTED, STARTING, READY, BUSY', array: true },
      { name: 'clusterNames', description: 'cluster names', array: true },
      { name: 'tags', description: 'key1=value1;key2=value2' },
    ],
    response: PageOf(Job),
    errors: [409],
    handler: ({ query }) => listJobs(deps, query),
  }),
  route({
    method: 'get',
    path: '/job/:jobId',
    role: 'viewer',
    tag: 'jobs',
    summary: 'Get a job by id (4.17)',
    response: Job,
    errors: [404],
    handler: ({ params }) => getJob(deps, params.jobId),
  }),
  route({
    method: 'get',
    path: '/job/:jobId/logs',
    role: 'viewer',
    tag: 'jobs',
    summary: 'Logs of all resources of a job (4.18)',
    query: [
      {
        name: 'logSize',
        description: `maximum number of lines per resource (default 100, at most LOGS_MAX_LINES = ${deps.config.LOGS_MAX_LINES})`,
      },
      { name: 'from', description: 'offset from the start of each log (default 0)' },
    ],
    response: z.array(JobLogEntry),
    errors: [404, 409, 503],
    handler: ({ params, query }) => jobLogs(deps, params.jobId, query),
  }),
  route({
    method: 'post',
    path: '/job/:jobId/cancel',
    role: 'operator',
    tag: 'jobs',
    summary: 'Cancel a job: its driver is removed and the job ends CANCELED',
    errors: [404, 409],
    handler: ({ params }) => cancelJob(deps, params.jobId),
  }),
  route({
    method: 'post',
    path: '/job/:jobId/stop',
    role: 'operator',
    tag: 'jobs',
    summary: 'Stop a job: its driver is removed and the job ends FINISHED',
    errors: [404, 409],
    handler: ({ params }) => stopJob(deps, params.jobId),
  }),
  route({
    method: 'delete',
    path: '/job/:jobId',
    role: 'operator',
    tag: 'jobs',
    summary: 'Delete a finished, failed or cancelled job: what is left of its drivers, then its record',
    errors: [404, 409],
    handler: ({ params }) => deleteJob(deps, params.jobId),
  }),
];
