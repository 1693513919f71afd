// Groups of interactive drivers (docs/api.md: Group; operations 4.1–4.4, 4.8, 4.10). Each group is the entity workflow
// `group/<groupId>`; its name is reserved before the workflow starts, and every change is an update of
// that workflow, which also writes the read model reads.ts reads.
import { WithStartWorkflowOperation, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Document } from 'mongodb';
import {
  formatTags,
  parseBoolField,
  parseIntField,
  parseJobConfig,
  parsePackages,
  parsePyRequirements,
  parseTags,
} from '../../domain/delimited';
import type { GroupSettingsPatch, GroupWorkflowInput } from '../../domain/group';
import { groupWorkflowId, SearchAttr } from '../../domain/ids';
import { parseMemorySettings } from '../../domain/memory';
import type { Group } from '../../domain/resources';
import { GroupKind, GroupState } from '../../domain/states';
import type { SparkSpec } from '../../domain/types';
import type { Config } from '../../lib/config';
import {
  acceptedGroupUpdate,
  archiveUpdate,
  pauseUpdate,
  rescaleUpdate,
  restartUpdate,
  resumeUpdate,
  updateGroupUpdate,
  type groupWorkflow,
} from '../../workflows/group';
import { deleteGroupWorkflow } from '../../workflows/ops';
import { checkUploads, discardUploads, storeUploads } from '../artifacts';
import { checkCluster } from '../clusters/quota';
import type { ApiDeps } from '../deps';
import { conflict, overLimit, workflowUpdate } from '../errors';
import { releaseName, reserveName } from '../names';
import type { Files } from '../routing';
import { memoryFormOf, sparkSpecOf } from '../spark-form';
import { forgetGroupDoc, getGroupDoc } from './reads';
import type { GroupCreateForm, GroupUpdateForm } from './schemas';

type GroupRecord = Omit<Group, 'jobs'>;

/** How long DELETE waits for an archived group's drivers to stop before answering 409. */
const DELETE_WAIT_MS = 60_000;

/** A scale above MAX_GROUP_SCALE is over the limit (402). */
function scaleOf(config: Config, s: string | undefined, dflt?: number): number | undefined {
  const n = parseIntField('scale', s, 0, 1_000_000) ?? dflt;
  if (n !== undefined && n > config.MAX_GROUP_SCALE)
    throw overLimit(`scale ${n} is above the maximum group scale of ${config.MAX_GROUP_SCALE}`);
  return n;
}

const handle = ({ temporal }: Pick<ApiDeps, 'temporal'>, groupId: string) =>
  temporal.workflow.getHandle<typeof groupWorkflow>(groupWorkflowId(groupId));

/** A group's workflow ends only after archiving, so a finished one means an archived group. */
const groupUpdate = (groupId: string, fn: () => Promise<unknown>) => {
  forgetGroupDoc(groupId);
  return workflowUpdate(fn, () => conflict(`group '${groupId}' is archived`)).finally(() => forgetGroupDoc(groupId));
};

function newGroupRecord(
  groupId: string,
  body: GroupCreateForm,
  spec: SparkSpec,
  scale: number,
  autoPause: boolean,
): GroupRecord {
  return {
    id: groupId,
    name: body.name,
    description: body.description ?? '',
    kind: body.kind ?? GroupKind.JOB,
    tags: formatTags(spec.tags),
    language: spec.language,
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
}

/** Start options of a group's workflow: one workflow per group id, searchable by group, cluster and type. */
export function groupStartOptions(config: Config, input: GroupWorkflowInput) {
  const { id, clusterName } = input.group;
  return {
    workflowId: groupWorkflowId(id),
    taskQueue: config.TASK_QUEUE,
    args: [input] as [GroupWorkflowInput],
    workflowIdConflictPolicy: 'FAIL' as const,
    searchAttributes: {
      [SearchAttr.groupId]: [id],
      [SearchAttr.clusterName]: [clusterName],
      [SearchAttr.jobType]: ['INTERACTIVE'],
    },
  };
}

/** Checks the form and the cluster's limits, reserves the name, then starts the group's workflow. */
export async function createGroup(deps: ApiDeps, body: GroupCreateForm, files: Files): Promise<{ groupId: string }> {
  const { store, temporal, config } = deps;
  try {
    checkUploads(files);
    const scale = scaleOf(config, body.scale, 1)!;
    const autoPause = parseBoolField('autoPause', body.autoPause) ?? false;
    const draft = sparkSpecOf(body.name, body, { jars: [], files: [], pyFiles: [] });
    await checkCluster(store, draft, Math.max(scale, 1));
    const groupId = randomUUID().replace(/-/g, '');
    await reserveName(store, 'group', body.name, groupId);
    try {
      const spec = { ...draft, artifacts: await storeUploads(config.ARTIFACT_DIR, groupId, files) };
      const group = newGroupRecord(groupId, body, spec, scale, autoPause);
      const input: GroupWorkflowInput = {
        group,
        spec,
        idlePauseMs: config.GROUP_IDLE_PAUSE_MS,
        maxScale: config.MAX_GROUP_SCALE,
        crashLoop: {
          limit: config.CRASH_LOOP_LIMIT,
          backoffMs: config.CRASH_BACKOFF_MS,
          maxBackoffMs: config.CRASH_BACKOFF_MAX_MS,
        },
      };
      await temporal.workflow.executeUpdateWithStart(acceptedGroupUpdate, {
        startWorkflowOperation: new WithStartWorkflowOperation<typeof groupWorkflow>(
          'groupWorkflow',
          groupStartOptions(config, input),
        ),
      });
      return { groupId };
    } catch (e) {
      await releaseName(store, 'group', body.name, groupId);
      throw e;
    }
  } finally {
    await discardUploads(files);
  }
}

/** The settings an update form changes; Spark settings restart the instances (in the workflow). */
function groupPatchOf(config: Config, body: GroupUpdateForm, g: Document): GroupSettingsPatch {
  const memForm = memoryFormOf(body);
  return {
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.tags !== undefined ? { tags: parseTags('tags', body.tags) } : {}),
    ...(body.jobConfig !== undefined ? { jobConfig: parseJobConfig('jobConfig', body.jobConfig) } : {}),
    ...(body.pyRequirements !== undefined
      ? { pyRequirements: parsePyRequirements('pyRequirements', body.pyRequirements) }
      : {}),
    ...(body.packages !== undefined ? { packages: parsePackages('packages', body.packages) } : {}),
    ...(body.scale !== undefined ? { scale: scaleOf(config, body.scale) } : {}),
    ...(body.autoPause !== undefined ? { autoPause: parseBoolField('autoPause', body.autoPause) } : {}),
    ...(Object.keys(memForm).length ? { memorySettings: parseMemorySettings(memForm, g.memorySettings) } : {}),
  };
}

export async function updateGroup(deps: ApiDeps, groupId: string, body: GroupUpdateForm, files: Files): Promise<void> {
  const { store, config } = deps;
  try {
    checkUploads(files);
    const g = await getGroupDoc(deps, groupId);
    if (g.state === GroupState.ARCHIVED) throw conflict(`group '${g.name}' is archived`);
    const patch = groupPatchOf(config, body, g);
    const memorySettings = patch.memorySettings ?? g.memorySettings;
    const jobConfig = patch.jobConfig ?? g.jobConfig;
    await checkCluster(
      store,
      { clusterName: g.clusterName, memorySettings, jobConfig },
      Math.max(patch.scale ?? g.scale, 1),
    );
    if (Object.keys(files).length) patch.addArtifacts = await storeUploads(config.ARTIFACT_DIR, g.id, files);
    await groupUpdate(g.id, () => handle(deps, g.id).executeUpdate(updateGroupUpdate, { args: [patch] }));
  } finally {
    await discardUploads(files);
  }
}

/** Running executions are not interrupted; the workflow drains the instances it removes. */
export async function rescaleGroup(deps: ApiDeps, groupId: string, scaleParam: string): Promise<void> {
  const g = await getGroupDoc(deps, groupId);
  if (g.state === GroupState.ARCHIVED) throw conflict(`group '${g.name}' is archived`);
  const scale = scaleOf(deps.config, scaleParam)!;
  // New drivers start with the stored jobConfig: checked again, the cluster's allowance may have changed.
  await checkCluster(
    deps.store,
    { clusterName: g.clusterName, memorySettings: g.memorySettings, jobConfig: g.jobConfig },
    Math.max(scale, 1),
  );
  await groupUpdate(g.id, () => handle(deps, g.id).executeUpdate(rescaleUpdate, { args: [scale] }));
}

export async function archiveGroup(deps: ApiDeps, groupId: string): Promise<void> {
  const g = await getGroupDoc(deps, groupId);
  if (g.state === GroupState.ARCHIVED) throw conflict(`group '${g.name}' is already archived`);
  await groupUpdate(g.id, () => handle(deps, g.id).executeUpdate(archiveUpdate));
}

const RUN_STATE_UPDATES = { pause: pauseUpdate, resume: resumeUpdate, restart: restartUpdate } as const;

/**
 * Pause (drivers stop, scale kept, executions refused), resume, or restart (every driver replaced one at
 * a time) a group; answers once the group's record shows it.
 */
export async function changeGroupRun(deps: ApiDeps, groupId: string, action: keyof typeof RUN_STATE_UPDATES) {
  const g = await getGroupDoc(deps, groupId);
  await groupUpdate(g.id, () => handle(deps, g.id).executeUpdate(RUN_STATE_UPDATES[action]));
}

/** Archives the group, waits for its workflow to end (every driver removed), then removes its records. */
export async function deleteGroup(deps: ApiDeps, groupId: string): Promise<void> {
  const g = await getGroupDoc(deps, groupId);
  const h = handle(deps, g.id);
  if (g.state !== GroupState.ARCHIVED)
    await groupUpdate(g.id, () => h.executeUpdate(archiveUpdate)).catch(() => undefined);
  // The group workflow ends once every driver is removed; only then can no late write resurrect it.
  const ended = await Promise.race([
    h.result().then(
      () => true,
      (e) => {
        if (e instanceof WorkflowNotFoundError || e instanceof WorkflowFailedError) return true;
        throw e;
      },
    ),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), DELETE_WAIT_MS).unref()),
  ]);
  if (!ended) throw conflict(`group '${g.name}' is archived but still stopping its drivers; delete it again shortly`);
  await deps.temporal.workflow.execute(deleteGroupWorkflow, {
    workflowId: `delete/${groupWorkflowId(g.id)}`,
    taskQueue: deps.config.TASK_QUEUE,
    args: [g.id],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowExecutionTimeout: '2m',
  });
  forgetGroupDoc(g.id);
}
