// Groups of interactive drivers (spec §2.3, §2.5, §4.1–4.10). Each group is the entity workflow
// `group/<groupId>`; executions are short workflows `jobinstance/<id>` on the group's task queue.
import { WithStartWorkflowOperation, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Document } from 'mongodb';
import { z } from 'zod';
import { formatTags, parseBoolField, parseIntField, parseJobConfig, parsePackages, parsePyRequirements, parseTags } from '../../domain/delimited';
import type { GroupSettingsPatch, GroupWorkflowInput, JobInstanceInput, JobInstanceRecord } from '../../domain/group';
import { groupWorkflowId, jobInstanceWorkflowId, SearchAttr } from '../../domain/ids';
import { parseMemorySettings } from '../../domain/memory';
import { DEFAULT_JOB_STATE_FILTER, GROUP_KINDS, GROUP_STATES, GroupKind, GroupState, JOB_STATES, Language, LANGUAGES } from '../../domain/states';
import type { Group } from '../../domain/types';
import { Collections } from '../../lib/mongo';
import { acceptedGroupUpdate, archiveUpdate, rescaleUpdate, updateGroupUpdate, type groupWorkflow } from '../../workflows/group';
import { jobInstanceWorkflow } from '../../workflows/job-instance';
import { deleteGroupWorkflow } from '../../workflows/ops';
import type { ApiDeps } from '../app';
import { checkUploads, discardUploads, storeUploads } from '../artifacts';
import { conflict, notFound, overLimit, workflowUpdate } from '../errors';
import { arrayParam, enumArrayParam, findPage, parseListQuery, resourceOf, searchFilter, tagsFilter } from '../list';
import { releaseName, reserveName } from '../names';
import { LIST_QUERY, route } from '../routing';
import { IdResponse, MemorySettings, name, PageOf } from '../schemas';
import { checkCluster, memoryFormFields, memoryFormOf, sparkFormFields, sparkSpecOf } from '../spark-form';
import { JobSchema, toJob } from './jobs';

const GroupSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  kind: z.enum(GROUP_KINDS),
  tags: z.string(),
  language: z.enum(LANGUAGES),
  clusterName: z.string(),
  state: z.enum(GROUP_STATES),
  scale: z.number().int(),
  jobConfig: z.record(z.string(), z.string()),
  pyRequirements: z.string(),
  packages: z.string(),
  createdTime: z.number().int(),
  archivedTime: z.number().int().optional(),
  memorySettings: MemorySettings,
  autoPause: z.boolean(),
  jobs: z.array(JobSchema),
});

export const ResultSchema = z.object({
  jobInstanceId: z.string(),
  jobId: z.string().optional(),
  groupId: z.string(),
  startTime: z.number().int().optional(),
  endTime: z.number().int().optional(),
  jobClass: z.string().optional(),
  jobConfig: z.record(z.string(), z.unknown()),
  result: z.string().nullable().optional(),
  error: z.object({ message: z.string(), stackTrace: z.string() }).nullable().optional(),
});

const GroupCreateForm = z
  .object({
    name,
    description: z.string().max(4096).optional(),
    kind: z.enum(GROUP_KINDS).optional(),
    ...sparkFormFields,
    scale: z.string().optional(),
    autoPause: z.string().optional(),
  })
  .omit({ jobClass: true, args: true })
  .strict();

const GroupUpdateForm = z
  .object({
    description: z.string().max(4096).optional(),
    tags: z.string().max(4096).optional(),
    jobConfig: z.string().max(16384).optional(),
    pyRequirements: z.string().max(4096).optional(),
    packages: z.string().max(4096).optional(),
    scale: z.string().optional(),
    autoPause: z.string().optional(),
    ...memoryFormFields,
  })
  .strict();

const ExecuteBody = z
  .object({
    type: z.enum(['interactive_job_execute', 'interactive_code_execute']).default('interactive_job_execute'),
    jobClass: z.string().trim().min(1).max(512).optional(),
    code: z.string().max(1_000_000).optional(),
    jobConfig: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

const GROUP_FILES = ['jars', 'files', 'pyFiles'];

/** Results carry their group's name, cluster and tags for the stream filters; the resource does not. */
export const toResult = (d: Document) => resourceOf<z.infer<typeof ResultSchema>>(d, ['clusterName']);

export const groupRoutes = ({ store, temporal, config }: ApiDeps) => {
  const groups = store.col(Collections.groups);
  const jobs = store.col(Collections.jobs);
  const results = store.col(Collections.results);

  const withJobs = async (d: Document, jobStates: string[]): Promise<Group> => {
    const g = resourceOf<Omit<Group, 'jobs'>>(d);
    const list = await jobs.find({ groupId: g.id, state: { $in: jobStates } }).sort({ submitTime: -1 }).limit(100).toArray();
    return { ...g, jobs: list.map(toJob) };
  };
  const getDoc = async (groupId: string) => {
    const d = await groups.findOne({ _id: groupId } as Document);
    if (!d) throw notFound(`group '${groupId}' does not exist`);
    return d;
  };
  const jobStatesOf = (q: Record<string, string | string[] | undefined>) => enumArrayParam(q, 'jobStates', JOB_STATES, DEFAULT_JOB_STATE_FILTER)!;
  const scaleOf = (s: string | undefined, dflt?: number) => {
    const n = parseIntField('scale', s, 0, 1_000_000) ?? dflt;
    if (n !== undefined && n > config.MAX_GROUP_SCALE) throw overLimit(`scale ${n} is above the maximum group scale of ${config.MAX_GROUP_SCALE}`);
    return n;
  };
  const handle = (groupId: string) => temporal.workflow.getHandle<typeof groupWorkflow>(groupWorkflowId(groupId));
  /** A group's workflow ends only after archiving, so a finished one means an archived group. */
  const groupUpdate = (groupId: string, fn: () => Promise<unknown>) => workflowUpdate(fn, () => conflict(`group '${groupId}' is archived`));

  const execution = async (groupId: string, body: z.infer<typeof ExecuteBody>, announce: boolean): Promise<JobInstanceInput> => {
    const g = await getDoc(groupId);
    if (g.state === GroupState.ARCHIVED) throw conflict(`group '${g.name}' is archived; it takes no executions`);
    if (body.type === 'interactive_code_execute') {
      if (g.kind !== GroupKind.CODE) throw conflict(`type: group '${g.name}' is of kind ${g.kind}; interactive_code_execute needs a CODE group`);
      if (body.code === undefined) throw conflict('code: interactive_code_execute needs the code to run');
    } else if (!body.jobClass) {
      throw conflict('jobClass: interactive_job_execute needs the job class to run, as module.Class');
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
    };
  };

  return [
    route({
      method: 'post',
      path: '/group',
      tag: 'groups',
      summary: 'Create a group of interactive drivers (4.2)',
      body: { kind: 'form', schema: GroupCreateForm, files: GROUP_FILES },
      response: IdResponse('groupId'),
      errors: [400, 402, 404, 409],
      handler: async ({ body, files }) => {
        try {
          checkUploads(files);
          const language = (body.language as Language | undefined) ?? Language.SCALA;
          if (language === Language.SCALA) {
            throw conflict('language: SCALA groups need a JVM runner, which this service does not have yet; create the group with language PYTHON');
          }
          const scale = scaleOf(body.scale, 1)!;
          const autoPause = parseBoolField('autoPause', body.autoPause) ?? false;
          const draft = sparkSpecOf(body.name, body, { jars: [], files: [], pyFiles: [] });
          await checkCluster(store, draft, Math.max(scale, 1));
          const groupId = randomUUID().replace(/-/g, '');
          await reserveName(store, 'group', body.name, groupId);
          try {
            const spec = { ...draft, artifacts: await storeUploads(config.ARTIFACT_DIR, groupId, files) };
            const group: Omit<Group, 'jobs'> = {
              id: groupId,
              name: body.name,
              description: body.description ?? '',
              kind: body.kind ?? GroupKind.JOB,
              tags: formatTags(spec.tags),
              language,
              clusterName: spec.clusterName,
              state: GroupState.ACTIVE,
              scale,
              jobConfig: spec.jobConfig,
              pyRequirements: spec.pyRequirements.join(';'),
              packages: spec.packages.join(','),
              createdTime: Date.now(),
              memorySettings: spec.memorySettings,
              autoPause,
            };
            const input: GroupWorkflowInput = { group, spec, idlePauseMs: config.GROUP_IDLE_PAUSE_MS, maxScale: config.MAX_GROUP_SCALE };
            await temporal.workflow.executeUpdateWithStart(acceptedGroupUpdate, {
              startWorkflowOperation: new WithStartWorkflowOperation<typeof groupWorkflow>('groupWorkflow', {
                workflowId: groupWorkflowId(groupId),
                taskQueue: config.TASK_QUEUE,
                args: [input],
                workflowIdConflictPolicy: 'FAIL',
                searchAttributes: { [SearchAttr.groupId]: [groupId], [SearchAttr.clusterName]: [spec.clusterName], [SearchAttr.jobType]: ['INTERACTIVE'] },
              }),
            });
            return { groupId };
          } catch (e) {
            await releaseName(store, 'group', body.name, groupId);
            throw e;
          }
        } finally {
          await discardUploads(files);
        }
      },
    }),
    route({
      method: 'get',
      path: '/group',
      tag: 'groups',
      summary: 'List groups (4.1)',
      query: [
        ...LIST_QUERY,
        { name: 'groupStates', description: 'ACTIVE, ARCHIVED', array: true },
        { name: 'groupKinds', description: 'JOB, CODE', array: true },
        { name: 'jobStates', description: 'states of the listed jobs of each group (default SUBMITTED, STARTING, READY, BUSY)', array: true },
        { name: 'clusterNames', description: 'cluster names', array: true },
        { name: 'tags', description: 'key1=value1;key2=value2' },
      ],
      response: PageOf(GroupSchema),
      errors: [409],
      handler: async ({ query }) => {
        const lq = parseListQuery(query, ['name', 'createdTime', 'state', 'kind', 'scale', 'clusterName'], config.MAX_PAGE_SIZE, ['createdTime', -1]);
        const states = enumArrayParam(query, 'groupStates', GROUP_STATES);
        const kinds = enumArrayParam(query, 'groupKinds', GROUP_KINDS);
        const clusters = arrayParam(query, 'clusterNames');
        const jobStates = jobStatesOf(query);
        const filter = {
          ...(states?.length ? { state: { $in: states } } : {}),
          ...(kinds?.length ? { kind: { $in: kinds } } : {}),
          ...(clusters?.length ? { clusterName: { $in: clusters } } : {}),
          ...tagsFilter(parseTags('tags', typeof query.tags === 'string' ? query.tags : undefined)),
          ...searchFilter(lq.search, ['name', 'description']),
        };
        return findPage(groups, filter, lq, (d) => withJobs(d, jobStates));
      },
    }),
    route({
      method: 'get',
      path: '/group/name/:groupName',
      tag: 'groups',
      summary: 'Get a group by name (4.10)',
      response: GroupSchema,
      errors: [404],
      handler: async ({ params, query }) => {
        const d = await groups.findOne({ name: params.groupName });
        if (!d) throw notFound(`no group is named '${params.groupName}'`);
        return withJobs(d, jobStatesOf(query));
      },
    }),
    route({
      method: 'get',
      path: '/group/:groupId',
      tag: 'groups',
      summary: 'Get a group by id (4.3)',
      response: GroupSchema,
      errors: [404],
      handler: async ({ params, query }) => withJobs(await getDoc(params.groupId), jobStatesOf(query)),
    }),
    route({
      method: 'put',
      path: '/group/:groupId',
      tag: 'groups',
      summary: 'Update a group (4.4); Spark settings restart the instances, one by one',
      body: { kind: 'form', schema: GroupUpdateForm, files: GROUP_FILES },
      errors: [400, 402, 404, 409],
      handler: async ({ params, body, files }) => {
        try {
          checkUploads(files);
          const g = await getDoc(params.groupId);
          if (g.state === GroupState.ARCHIVED) throw conflict(`group '${g.name}' is archived`);
          const memForm = memoryFormOf(body);
          const patch: GroupSettingsPatch = {
            ...(body.description !== undefined ? { description: body.description } : {}),
            ...(body.tags !== undefined ? { tags: parseTags('tags', body.tags) } : {}),
            ...(body.jobConfig !== undefined ? { jobConfig: parseJobConfig('jobConfig', body.jobConfig) } : {}),
            ...(body.pyRequirements !== undefined ? { pyRequirements: parsePyRequirements('pyRequirements', body.pyRequirements) } : {}),
            ...(body.packages !== undefined ? { packages: parsePackages('packages', body.packages) } : {}),
            ...(body.scale !== undefined ? { scale: scaleOf(body.scale) } : {}),
            ...(body.autoPause !== undefined ? { autoPause: parseBoolField('autoPause', body.autoPause) } : {}),
            ...(Object.keys(memForm).length ? { memorySettings: parseMemorySettings(memForm, g.memorySettings) } : {}),
          };
          await checkCluster(store, { clusterName: g.clusterName, memorySettings: patch.memorySettings ?? g.memorySettings }, Math.max(patch.scale ?? g.scale, 1));
          if (Object.keys(files).length) patch.addArtifacts = await storeUploads(config.ARTIFACT_DIR, g.id, files);
          await groupUpdate(g.id, () => handle(g.id).executeUpdate(updateGroupUpdate, { args: [patch] }));
        } finally {
          await discardUploads(files);
        }
      },
    }),
    route({
      method: 'post',
      path: '/group/:groupId/rescale/:scale',
      tag: 'groups',
      summary: 'Change the scale of a group (4.8); running executions are not interrupted',
      errors: [402, 404, 409],
      handler: async ({ params }) => {
        const g = await getDoc(params.groupId);
        if (g.state === GroupState.ARCHIVED) throw conflict(`group '${g.name}' is archived`);
        const scale = scaleOf(params.scale)!;
        await checkCluster(store, { clusterName: g.clusterName, memorySettings: g.memorySettings }, Math.max(scale, 1));
        await groupUpdate(g.id, () => handle(g.id).executeUpdate(rescaleUpdate, { args: [scale] }));
      },
    }),
    route({
      method: 'post',
      path: '/group/:groupId/stop',
      tag: 'groups',
      summary: 'Archive a group: its instances stop and it takes no more executions',
      errors: [404, 409],
      handler: async ({ params }) => {
        const g = await getDoc(params.groupId);
        if (g.state === GroupState.ARCHIVED) throw conflict(`group '${g.name}' is already archived`);
        await groupUpdate(g.id, () => handle(g.id).executeUpdate(archiveUpdate));
      },
    }),
    route({
      method: 'delete',
      path: '/group/:groupId',
      tag: 'groups',
      summary: 'Delete a group: archive it (stopping its instances), then remove its records',
      errors: [404, 409],
      handler: async ({ params }) => {
        const g = await getDoc(params.groupId);
        const h = handle(g.id);
        if (g.state !== GroupState.ARCHIVED) await groupUpdate(g.id, () => h.executeUpdate(archiveUpdate)).catch(() => undefined);
        // The group workflow ends once every driver is removed; only then can no late write resurrect it.
        const ended = await Promise.race([
          h.result().then(
            () => true,
            (e) => {
              if (e instanceof WorkflowNotFoundError || e instanceof WorkflowFailedError) return true;
              throw e;
            },
          ),
          new Promise<false>((resolve) => setTimeout(() => resolve(false), 60_000).unref()),
        ]);
        if (!ended) throw conflict(`group '${g.name}' is archived but still stopping its drivers; delete it again shortly`);
        await temporal.workflow.execute(deleteGroupWorkflow, {
          workflowId: `delete/${groupWorkflowId(g.id)}`,
          taskQueue: config.TASK_QUEUE,
          args: [g.id],
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowExecutionTimeout: '2m',
        });
      },
    }),
    route({
      method: 'post',
      path: '/group/:groupId/job/execute',
      tag: 'groups',
      summary: 'Execute a job class (or code) in a group and wait for its result (4.5)',
      body: { kind: 'json', schema: ExecuteBody },
      response: ResultSchema,
      errors: [400, 402, 404, 409],
      handler: async ({ params, body }) => {
        const input = await execution(params.groupId, body, false);
        const record: JobInstanceRecord = await temporal.workflow.execute(jobInstanceWorkflow, {
          workflowId: jobInstanceWorkflowId(input.jobInstanceId),
          taskQueue: config.TASK_QUEUE,
          args: [input],
        });
        return toResult(record);
      },
    }),
    route({
      method: 'post',
      path: '/group/:groupId/job/submit',
      tag: 'groups',
      summary: 'Submit a job class (or code) to a group without waiting (4.7); the result comes on the result stream',
      body: { kind: 'json', schema: ExecuteBody },
      response: IdResponse('jobInstanceId'),
      errors: [400, 402, 404, 409],
      handler: async ({ params, body }) => {
        const input = await execution(params.groupId, body, true);
        await temporal.workflow.start(jobInstanceWorkflow, {
          workflowId: jobInstanceWorkflowId(input.jobInstanceId),
          taskQueue: config.TASK_QUEUE,
          args: [input],
        });
        return { jobInstanceId: input.jobInstanceId };
      },
    }),
    route({
      method: 'get',
      path: '/group/:groupId/job/result',
      tag: 'groups',
      summary: 'List job instance results of a group (4.6)',
      query: LIST_QUERY,
      response: PageOf(ResultSchema),
      errors: [404, 409],
      handler: async ({ params, query }) => {
        await getDoc(params.groupId);
        const lq = parseListQuery(query, ['startTime', 'endTime', 'jobClass'], config.MAX_PAGE_SIZE, ['startTime', -1]);
        return findPage(results, { groupId: params.groupId, ...searchFilter(lq.search, ['jobClass', 'result']) }, lq, toResult);
      },
    }),
  ];
};
