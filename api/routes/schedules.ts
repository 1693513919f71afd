// Schedules (spec §2.6, §3.3, §4.11–4.15): each is a Temporal Schedule `schedule/<scheduleId>` kept by
// the workflow `schedulekeeper/<scheduleId>`; every run is an ordinary single job carrying the scheduleId.
import { WithStartWorkflowOperation } from '@temporalio/client';
import { CronExpressionParser } from 'cron-parser';
import { randomUUID } from 'node:crypto';
import type { Document } from 'mongodb';
import { z } from 'zod';
import { formatTags, parseArgs, parseJobConfig, parsePackages, parsePyRequirements, parseTags } from '../../domain/delimited';
import { scheduleKeeperWorkflowId, SearchAttr } from '../../domain/ids';
import { parseMemorySettings } from '../../domain/memory';
import type { ScheduleSettingsPatch, ScheduleWorkflowInput } from '../../domain/schedule';
import { DEFAULT_JOB_STATE_FILTER, JOB_STATES, LANGUAGES, SCHEDULE_STATES, ScheduleState } from '../../domain/states';
import type { Schedule } from '../../domain/types';
import { Collections } from '../../lib/mongo';
import {
  acceptedScheduleUpdate,
  deleteScheduleUpdate,
  disableScheduleUpdate,
  pauseScheduleUpdate,
  resumeScheduleUpdate,
  updateScheduleUpdate,
  type scheduleWorkflow,
} from '../../workflows/schedule';
import type { ApiDeps } from '../app';
import { checkUploads, discardUploads, storeUploads } from '../artifacts';
import { conflict, notFound, workflowUpdate } from '../errors';
import { arrayParam, enumArrayParam, findPage, parseListQuery, resourceOf, searchFilter, tagsFilter } from '../list';
import { releaseName, reserveName } from '../names';
import { LIST_QUERY, route } from '../routing';
import { IdResponse, MemorySettings, name, PageOf } from '../schemas';
import { checkCluster, checkMainResource, memoryFormFields, memoryFormOf, parseMaxRetries, sparkFormFields, sparkSpecOf } from '../spark-form';
import { JobSchema, toJob } from './jobs';

const ScheduleSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  cron: z.string(),
  tags: z.string(),
  language: z.enum(LANGUAGES),
  clusterName: z.string(),
  jobConfig: z.record(z.string(), z.string()),
  pyRequirements: z.string(),
  packages: z.string(),
  state: z.enum(SCHEDULE_STATES),
  jobClass: z.string(),
  args: z.array(z.string()),
  startTime: z.number().int().optional(),
  endTime: z.number().int().optional(),
  maxRetries: z.number().int(),
  createdTime: z.number().int(),
  disabledTime: z.number().int().optional(),
  memorySettings: MemorySettings,
  jobs: z.array(JobSchema),
});

const time = (field: string) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]{1,15}$/, `${field} must be epoch milliseconds`)
    .optional();

const ScheduleCreateForm = z
  .object({
    name,
    description: z.string().max(4096).optional(),
    cron: z.string().trim().min(1, 'is required').max(256),
    ...sparkFormFields,
    jobClass: z.string().trim().min(1, 'is required').max(512),
    startTime: time('startTime'),
    endTime: time('endTime'),
    maxRetries: z.string().optional(),
  })
  .strict();

const ScheduleUpdateForm = z
  .object({
    description: z.string().max(4096).optional(),
    tags: z.string().max(4096).optional(),
    jobConfig: z.string().max(16384).optional(),
    cron: z.string().trim().min(1).max(256).optional(),
    args: z.string().max(16384).optional(),
    jobClass: z.string().trim().min(1).max(512).optional(),
    pyRequirements: z.string().max(4096).optional(),
    packages: z.string().max(4096).optional(),
    startTime: z.string().trim().optional(),
    endTime: z.string().trim().optional(),
    maxRetries: z.string().optional(),
    ...memoryFormFields,
  })
  .strict();

/** Standard five-field cron (minute hour day-of-month month day-of-week), or a Temporal @ shorthand. */
export function checkCron(cron: string): string {
  const c = cron.trim().replace(/\s+/g, ' ');
  if (/^@(yearly|annually|monthly|weekly|daily|hourly)$/.test(c)) return c;
  if (/^@every\s+\d+[smhd]$/.test(c)) return c;
  const fields = c.split(' ');
  if (fields.length !== 5) {
    throw conflict(`cron: '${cron}' has ${fields.length} fields; a cron expression has 5: minute hour day-of-month month day-of-week (e.g. '*/5 * * * *')`);
  }
  try {
    CronExpressionParser.parse(c);
  } catch (e) {
    throw conflict(`cron: '${cron}' is not a valid cron expression: ${(e as Error).message}`);
  }
  return c;
}

/** '' clears an optional time in an update; otherwise epoch milliseconds. */
function timeOf(field: string, s: string | undefined): number | null | undefined {
  if (s === undefined) return undefined;
  if (s === '') return null;
  if (!/^[0-9]{1,15}$/.test(s)) throw conflict(`${field}: '${s}' must be epoch milliseconds`);
  return Number(s);
}

function checkWindow(startTime: number | undefined, endTime: number | undefined, now: number) {
  if (endTime !== undefined && endTime <= now) throw conflict(`endTime: ${endTime} is in the past; no run could happen`);
  if (startTime !== undefined && endTime !== undefined && endTime <= startTime) throw conflict('endTime: must be after startTime');
}

export const scheduleRoutes = ({ store, temporal, config }: ApiDeps) => {
  const schedules = store.col(Collections.schedules);
  const jobs = store.col(Collections.jobs);
  const withJobs = async (d: Document, jobStates?: string[]): Promise<Schedule> => {
    const s = resourceOf<Omit<Schedule, 'jobs'>>(d);
    const list = await jobs
      .find({ scheduleId: s.id, ...(jobStates ? { state: { $in: jobStates } } : {}) })
      .sort({ submitTime: -1 })
      .limit(20)
      .toArray();
    return { ...s, jobs: list.map(toJob) };
  };
  const getDoc = async (scheduleId: string) => {
    const d = await schedules.findOne({ _id: scheduleId } as Document);
    if (!d) throw notFound(`schedule '${scheduleId}' does not exist`);
    return d;
  };
  const handle = (id: string) => temporal.workflow.getHandle<typeof scheduleWorkflow>(scheduleKeeperWorkflowId(id));
  const scheduleUpdate = (id: string, fn: () => Promise<unknown>) => workflowUpdate(fn, () => notFound(`schedule '${id}' does not exist`));
  const stateAction = (action: 'pause' | 'resume' | 'disable', def: typeof pauseScheduleUpdate, summary: string) =>
    route({
      method: 'post',
      path: `/schedule/:scheduleId/${action}`,
      tag: 'schedules',
      summary,
      errors: [404, 409],
      handler: async ({ params }) => {
        const d = await getDoc(params.scheduleId);
        await scheduleUpdate(d.id, () => handle(d.id).executeUpdate(def));
      },
    });

  return [
    route({
      method: 'post',
      path: '/schedule',
      tag: 'schedules',
      summary: 'Create a schedule (4.12): a Temporal Schedule whose runs are single jobs',
      body: { kind: 'form', schema: ScheduleCreateForm, files: ['jars', 'files', 'pyFiles'] },
      response: IdResponse('scheduleId'),
      errors: [400, 402, 404, 409],
      handler: async ({ body, files }) => {
        try {
          checkUploads(files);
          const cron = checkCron(body.cron);
          const now = Date.now();
          const startTime = timeOf('startTime', body.startTime) ?? undefined;
          const endTime = timeOf('endTime', body.endTime) ?? undefined;
          checkWindow(startTime, endTime, now);
          const draft = sparkSpecOf(body.name, body, { jars: [], files: [], pyFiles: [] });
          checkMainResource(draft, { jars: (files.jars ?? []).map((f) => f.originalFilename), pyFiles: (files.pyFiles ?? []).map((f) => f.originalFilename) });
          const maxRetries = parseMaxRetries(body.maxRetries);
          await checkCluster(store, draft);
          const scheduleId = randomUUID().replace(/-/g, '');
          await reserveName(store, 'schedule', body.name, scheduleId);
          try {
            const spec = { ...draft, artifacts: await storeUploads(config.ARTIFACT_DIR, scheduleId, files) };
            const schedule: Omit<Schedule, 'jobs'> = {
              id: scheduleId,
              name: body.name,
              description: body.description ?? '',
              cron,
              tags: formatTags(spec.tags),
              language: spec.language,
              clusterName: spec.clusterName,
              jobConfig: spec.jobConfig,
              pyRequirements: spec.pyRequirements.join(';'),
              packages: spec.packages.join(','),
              state: ScheduleState.ENABLED,
              jobClass: body.jobClass,
              args: spec.args,
              ...(startTime !== undefined ? { startTime } : {}),
              ...(endTime !== undefined ? { endTime } : {}),
              maxRetries,
              createdTime: now,
              memorySettings: spec.memorySettings,
            };
            const input: ScheduleWorkflowInput = { schedule, spec, taskQueue: config.TASK_QUEUE };
            await scheduleUpdate(scheduleId, () =>
              temporal.workflow.executeUpdateWithStart(acceptedScheduleUpdate, {
                startWorkflowOperation: new WithStartWorkflowOperation<typeof scheduleWorkflow>('scheduleWorkflow', {
                  workflowId: scheduleKeeperWorkflowId(scheduleId),
                  taskQueue: config.TASK_QUEUE,
                  args: [input],
                  workflowIdConflictPolicy: 'FAIL',
                  searchAttributes: { [SearchAttr.scheduleId]: [scheduleId], [SearchAttr.clusterName]: [spec.clusterName] },
                }),
              }),
            );
            return { scheduleId };
          } catch (e) {
            await releaseName(store, 'schedule', body.name, scheduleId);
            throw e;
          }
        } finally {
          await discardUploads(files);
        }
      },
    }),
    route({
      method: 'get',
      path: '/schedule',
      tag: 'schedules',
      summary: 'List schedules (4.11)',
      query: [
        ...LIST_QUERY,
        { name: 'scheduleStates', description: 'ENABLED, DISABLED, PAUSED (default ENABLED)', array: true },
        { name: 'scheduleCrons', description: 'cron expressions', array: true },
        { name: 'jobStates', description: 'states of the listed jobs of each schedule (default SUBMITTED, STARTING, READY, BUSY)', array: true },
        { name: 'clusterNames', description: 'cluster names', array: true },
        { name: 'tags', description: 'key1=value1;key2=value2' },
      ],
      response: PageOf(ScheduleSchema),
      errors: [409],
      handler: async ({ query }) => {
        const lq = parseListQuery(query, ['name', 'createdTime', 'state', 'cron', 'clusterName'], config.MAX_PAGE_SIZE, ['createdTime', -1]);
        const states = enumArrayParam(query, 'scheduleStates', SCHEDULE_STATES, [ScheduleState.ENABLED])!;
        const crons = arrayParam(query, 'scheduleCrons');
        const clusters = arrayParam(query, 'clusterNames');
        const jobStates = enumArrayParam(query, 'jobStates', JOB_STATES, DEFAULT_JOB_STATE_FILTER)!;
        const filter = {
          state: { $in: states },
          ...(crons?.length ? { cron: { $in: crons } } : {}),
          ...(clusters?.length ? { clusterName: { $in: clusters } } : {}),
          ...tagsFilter(parseTags('tags', typeof query.tags === 'string' ? query.tags : undefined)),
          ...searchFilter(lq.search, ['name', 'description']),
        };
        return findPage(schedules, filter, lq, (d) => withJobs(d, jobStates));
      },
    }),
    route({
      method: 'get',
      path: '/schedule/name/:scheduleName',
      tag: 'schedules',
      summary: 'Get a schedule by name (4.15); jobs: its 20 newest',
      response: ScheduleSchema,
      errors: [404],
      handler: async ({ params }) => {
        const d = await schedules.findOne({ name: params.scheduleName });
        if (!d) throw notFound(`no schedule is named '${params.scheduleName}'`);
        return withJobs(d);
      },
    }),
    route({
      method: 'get',
      path: '/schedule/:scheduleId',
      tag: 'schedules',
      summary: 'Get a schedule by id (4.13); jobs: its 20 newest',
      response: ScheduleSchema,
      errors: [404],
      handler: async ({ params }) => withJobs(await getDoc(params.scheduleId)),
    }),
    route({
      method: 'put',
      path: '/schedule/:scheduleId',
      tag: 'schedules',
      summary: 'Update a schedule (4.14); changes apply from the next run',
      body: { kind: 'form', schema: ScheduleUpdateForm, files: ['jars', 'files', 'pyFiles'] },
      errors: [400, 402, 404, 409],
      handler: async ({ params, body, files }) => {
        try {
          checkUploads(files);
          const d = await getDoc(params.scheduleId);
          const memForm = memoryFormOf(body);
          const startTime = timeOf('startTime', body.startTime);
          const endTime = timeOf('endTime', body.endTime);
          const nextStart = startTime === undefined ? d.startTime : (startTime ?? undefined);
          const nextEnd = endTime === undefined ? d.endTime : (endTime ?? undefined);
          if (startTime !== undefined || endTime !== undefined) checkWindow(nextStart, nextEnd, Date.now());
          const patch: ScheduleSettingsPatch = {
            ...(body.description !== undefined ? { description: body.description } : {}),
            ...(body.tags !== undefined ? { tags: parseTags('tags', body.tags) } : {}),
            ...(body.jobConfig !== undefined ? { jobConfig: parseJobConfig('jobConfig', body.jobConfig) } : {}),
            ...(body.cron !== undefined ? { cron: checkCron(body.cron) } : {}),
            ...(body.args !== undefined ? { args: parseArgs('args', body.args) } : {}),
            ...(body.jobClass !== undefined ? { jobClass: body.jobClass } : {}),
            ...(body.pyRequirements !== undefined ? { pyRequirements: parsePyRequirements('pyRequirements', body.pyRequirements) } : {}),
            ...(body.packages !== undefined ? { packages: parsePackages('packages', body.packages) } : {}),
            ...(startTime !== undefined ? { startTime } : {}),
            ...(endTime !== undefined ? { endTime } : {}),
            ...(body.maxRetries !== undefined ? { maxRetries: parseMaxRetries(body.maxRetries) } : {}),
            ...(Object.keys(memForm).length ? { memorySettings: parseMemorySettings(memForm, d.memorySettings) } : {}),
          };
          await checkCluster(store, { clusterName: d.clusterName, memorySettings: patch.memorySettings ?? d.memorySettings });
          if (Object.keys(files).length) patch.addArtifacts = await storeUploads(config.ARTIFACT_DIR, d.id, files);
          await scheduleUpdate(d.id, () => handle(d.id).executeUpdate(updateScheduleUpdate, { args: [patch] }));
        } finally {
          await discardUploads(files);
        }
      },
    }),
    stateAction('pause', pauseScheduleUpdate, 'Pause a schedule: no runs until it is resumed'),
    stateAction('resume', resumeScheduleUpdate, 'Resume a paused or disabled schedule'),
    stateAction('disable', disableScheduleUpdate, 'Disable a schedule: no more runs (state DISABLED)'),
    route({
      method: 'delete',
      path: '/schedule/:scheduleId',
      tag: 'schedules',
      summary: 'Delete a schedule; the jobs it created stay',
      errors: [404, 409],
      handler: async ({ params }) => {
        const d = await getDoc(params.scheduleId);
        await scheduleUpdate(d.id, () => handle(d.id).executeUpdate(deleteScheduleUpdate));
      },
    }),
  ];
};
