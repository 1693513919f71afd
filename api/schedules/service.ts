// Schedules (/schedule and /schedule/{scheduleId}): each is a Temporal Schedule `schedule/<scheduleId>` kept by
// the workflow `schedulekeeper/<scheduleId>`; every run is an ordinary single job carrying the
// scheduleId. The name is reserved before the keeper starts; every change is an update of the keeper.
import { WithStartWorkflowOperation } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Document } from 'mongodb';
import {
  formatTags,
  parseArgs,
  parseJobConfig,
  parsePackages,
  parsePyRequirements,
  parseTags,
} from '../../domain/delimited';
import { scheduleId as temporalScheduleId, scheduleKeeperWorkflowId, SearchAttr } from '../../domain/ids';
import { parseMemorySettings } from '../../domain/memory';
import type { Schedule } from '../../domain/resources';
import type { ScheduleSettingsPatch, ScheduleWorkflowInput } from '../../domain/schedule';
import { DEFAULT_JOB_STATE_FILTER, JOB_STATES, SCHEDULE_STATES, ScheduleState } from '../../domain/states';
import type { SparkSpec } from '../../domain/types';
import type { Config } from '../../lib/config';
import { logger } from '../../lib/log';
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
import { checkUploads, discardUploads, storeUploads } from '../artifacts';
import { checkCluster } from '../clusters/quota';
import type { ApiDeps } from '../deps';
import { findOr404, notFound, workflowUpdate } from '../errors';
import {
  arrayParam,
  enumArrayParam,
  findPage,
  parseListQuery,
  resourceOf,
  searchFilter,
  tagsFilter,
  type Page,
  type Query,
} from '../list';
import { releaseName, reserveName } from '../names';
import { toJob } from '../resources';
import type { Files } from '../routing';
import { checkMainResource, memoryFormOf, parseMaxRetries, sparkSpecOf } from '../spark-form';
import type { ScheduleCreateForm, ScheduleDetail, ScheduleUpdateForm } from './schemas';
import { checkCron, checkWindow, timeOf } from './timing';

type ScheduleRecord = Omit<Schedule, 'jobs'>;

export async function getScheduleDoc({ store }: Pick<ApiDeps, 'store'>, scheduleId: string): Promise<Document> {
  return findOr404(
    store.col(Collections.schedules),
    { _id: scheduleId } as Document,
    `schedule '${scheduleId}' does not exist`,
  );
}

/** The schedule resource: the read-model document with its newest 20 jobs (in the given states). */
async function withJobs({ store }: Pick<ApiDeps, 'store'>, d: Document, jobStates?: string[]): Promise<Schedule> {
  const s = resourceOf<ScheduleRecord>(d);
  const list = await store
    .col(Collections.jobs)
    .find({ scheduleId: s.id, ...(jobStates ? { state: { $in: jobStates } } : {}) })
    .sort({ submitTime: -1 })
    .limit(20)
    .toArray();
  return { ...s, jobs: list.map(toJob) };
}

const handle = ({ temporal }: Pick<ApiDeps, 'temporal'>, id: string) =>
  temporal.workflow.getHandle<typeof scheduleWorkflow>(scheduleKeeperWorkflowId(id));

/** A keeper that no longer runs means a deleted schedule. */
const scheduleUpdate = (id: string, fn: () => Promise<unknown>) =>
  workflowUpdate(fn, () => notFound(`schedule '${id}' does not exist`));

const log = logger('api.schedules');
const NEXT_RUNS = 5;

/** The next fire times of an ENABLED schedule, as its Temporal Schedule computes them; undefined if unknown. */
async function nextRunTimes({ temporal }: Pick<ApiDeps, 'temporal'>, s: Schedule): Promise<number[] | undefined> {
  if (s.state !== ScheduleState.ENABLED) return undefined;
  try {
    const d = await temporal.schedule.getHandle(temporalScheduleId(s.id)).describe();
    return d.info.nextActionTimes.slice(0, NEXT_RUNS).map((t) => t.getTime());
  } catch (e) {
    // Created a moment ago (the keeper has not made it yet) or Temporal unreachable: the schedule reads without.
    log.warn('next run times not read', { scheduleId: s.id, error: (e as Error).message });
    return undefined;
  }
}

export async function getSchedule(deps: ApiDeps, scheduleId: string): Promise<ScheduleDetail> {
  const s = await withJobs(deps, await getScheduleDoc(deps, scheduleId));
  const next = await nextRunTimes(deps, s);
  return next ? { ...s, nextRunTimes: next } : s;
}

export async function getScheduleByName(deps: ApiDeps, name: string): Promise<Schedule> {
  const d = await findOr404(deps.store.col(Collections.schedules), { name }, `no schedule is named '${name}'`);
  return withJobs(deps, d);
}

export async function listSchedules(deps: ApiDeps, query: Query): Promise<Page<Schedule>> {
  const lq = parseListQuery(query, ['name', 'createdTime', 'state', 'cron', 'clusterName'], deps.config.MAX_PAGE_SIZE, [
    'createdTime',
    -1,
  ]);
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
  return findPage(deps.store.col(Collections.schedules), filter, lq, (d) => withJobs(deps, d, jobStates));
}

interface NewSchedule {
  id: string;
  body: ScheduleCreateForm;
  spec: SparkSpec;
  cron: string;
  startTime?: number;
  endTime?: number;
  maxRetries: number;
  now: number;
}

function newScheduleRecord({ id, body, spec, cron, startTime, endTime, maxRetries, now }: NewSchedule): ScheduleRecord {
  return {
    id,
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
}

/** Start options of a schedule's keeper: one per schedule id, searchable by schedule and cluster. */
export function scheduleStartOptions(config: Config, input: ScheduleWorkflowInput) {
  const { id, clusterName } = input.schedule;
  return {
    workflowId: scheduleKeeperWorkflowId(id),
    taskQueue: config.TASK_QUEUE,
    args: [input] as [ScheduleWorkflowInput],
    workflowIdConflictPolicy: 'FAIL' as const,
    searchAttributes: { [SearchAttr.scheduleId]: [id], [SearchAttr.clusterName]: [clusterName] },
  };
}

/** Checks cron, window, main resource and the cluster's limits, reserves the name, starts the keeper. */
export async function createSchedule(
  deps: ApiDeps,
  body: ScheduleCreateForm,
  files: Files,
): Promise<{ scheduleId: string }> {
  const { store, temporal, config } = deps;
  try {
    checkUploads(files);
    const cron = checkCron(body.cron);
    const now = Date.now();
    const startTime = timeOf('startTime', body.startTime) ?? undefined;
    const endTime = timeOf('endTime', body.endTime) ?? undefined;
    checkWindow(startTime, endTime, now);
    const draft = sparkSpecOf(body.name, body, { jars: [], files: [], pyFiles: [] });
    checkMainResource(draft, {
      jars: (files.jars ?? []).map((f) => f.originalFilename),
      pyFiles: (files.pyFiles ?? []).map((f) => f.originalFilename),
    });
    const maxRetries = parseMaxRetries(body.maxRetries);
    await checkCluster(store, draft);
    const id = randomUUID().replace(/-/g, '');
    await reserveName(store, 'schedule', body.name, id);
    try {
      const spec = { ...draft, artifacts: await storeUploads(config.ARTIFACT_DIR, id, files) };
      const schedule = newScheduleRecord({ id, body, spec, cron, startTime, endTime, maxRetries, now });
      const input: ScheduleWorkflowInput = { schedule, spec, taskQueue: config.TASK_QUEUE };
      await scheduleUpdate(id, () =>
        temporal.workflow.executeUpdateWithStart(acceptedScheduleUpdate, {
          startWorkflowOperation: new WithStartWorkflowOperation<typeof scheduleWorkflow>(
            'scheduleWorkflow',
            scheduleStartOptions(config, input),
          ),
        }),
      );
      return { scheduleId: id };
    } catch (e) {
      await releaseName(store, 'schedule', body.name, id);
      throw e;
    }
  } finally {
    await discardUploads(files);
  }
}

/** The settings an update form changes; the window is checked as it will be after the update. */
function schedulePatchOf(body: ScheduleUpdateForm, d: Document): ScheduleSettingsPatch {
  const memForm = memoryFormOf(body);
  const startTime = timeOf('startTime', body.startTime);
  const endTime = timeOf('endTime', body.endTime);
  const nextStart = startTime === undefined ? d.startTime : (startTime ?? undefined);
  const nextEnd = endTime === undefined ? d.endTime : (endTime ?? undefined);
  if (startTime !== undefined || endTime !== undefined) checkWindow(nextStart, nextEnd, Date.now());
  return {
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.tags !== undefined ? { tags: parseTags('tags', body.tags) } : {}),
    ...(body.jobConfig !== undefined ? { jobConfig: parseJobConfig('jobConfig', body.jobConfig) } : {}),
    ...(body.cron !== undefined ? { cron: checkCron(body.cron) } : {}),
    ...(body.args !== undefined ? { args: parseArgs('args', body.args) } : {}),
    ...(body.jobClass !== undefined ? { jobClass: body.jobClass } : {}),
    ...(body.pyRequirements !== undefined
      ? { pyRequirements: parsePyRequirements('pyRequirements', body.pyRequirements) }
      : {}),
    ...(body.packages !== undefined ? { packages: parsePackages('packages', body.packages) } : {}),
    ...(startTime !== undefined ? { startTime } : {}),
    ...(endTime !== undefined ? { endTime } : {}),
    ...(body.maxRetries !== undefined ? { maxRetries: parseMaxRetries(body.maxRetries) } : {}),
    ...(Object.keys(memForm).length ? { memorySettings: parseMemorySettings(memForm, d.memorySettings) } : {}),
  };
}

/** Changes apply from the next run. */
export async function updateSchedule(
  deps: ApiDeps,
  scheduleId: string,
  body: ScheduleUpdateForm,
  files: Files,
): Promise<void> {
  const { store, config } = deps;
  try {
    checkUploads(files);
    const d = await getScheduleDoc(deps, scheduleId);
    const patch = schedulePatchOf(body, d);
    await checkCluster(store, {
      clusterName: d.clusterName,
      memorySettings: patch.memorySettings ?? d.memorySettings,
      jobConfig: patch.jobConfig ?? d.jobConfig,
    });
    if (Object.keys(files).length) patch.addArtifacts = await storeUploads(config.ARTIFACT_DIR, d.id, files);
    await scheduleUpdate(d.id, () => handle(deps, d.id).executeUpdate(updateScheduleUpdate, { args: [patch] }));
  } finally {
    await discardUploads(files);
  }
}

const STATE_UPDATES = { pause: pauseScheduleUpdate, resume: resumeScheduleUpdate, disable: disableScheduleUpdate };
export type ScheduleAction = keyof typeof STATE_UPDATES;

/** Pause, resume or disable; the keeper's validator refuses a change the current state does not allow (409). */
export async function changeScheduleState(deps: ApiDeps, scheduleId: string, action: ScheduleAction): Promise<void> {
  const d = await getScheduleDoc(deps, scheduleId);
  await scheduleUpdate(d.id, () => handle(deps, d.id).executeUpdate(STATE_UPDATES[action]));
}

/** The jobs the schedule created stay. */
export async function deleteSchedule(deps: ApiDeps, scheduleId: string): Promise<void> {
  const d = await getScheduleDoc(deps, scheduleId);
  await scheduleUpdate(d.id, () => handle(deps, d.id).executeUpdate(deleteScheduleUpdate));
}
