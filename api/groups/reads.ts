// Reads of groups (docs/api.md: Group; operations 4.1, 4.3, 4.10) from the read model, and the short-lived
// cache of group documents that executions check (service.ts forgets an entry on every change it makes).
import type { Document } from 'mongodb';
import { parseTags } from '../../domain/delimited';
import type { Group } from '../../domain/resources';
import { DEFAULT_JOB_STATE_FILTER, GROUP_KINDS, GROUP_STATES, JOB_STATES } from '../../domain/states';
import { Collections } from '../../lib/mongo';
import type { ApiDeps } from '../deps';
import { findOr404 } from '../errors';
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
import { toJob } from '../resources';

type GroupRecord = Omit<Group, 'jobs'>;

export async function getGroupDoc({ store }: Pick<ApiDeps, 'store'>, groupId: string): Promise<Document> {
  return findOr404(store.col(Collections.groups), { _id: groupId } as Document, `group '${groupId}' does not exist`);
}

/** How long an execution may use a group document read before (this process forgets it on any change it makes). */
const RECENT_GROUP_MS = 500;
const recentGroups = new Map<string, { at: number; doc: Document }>();
/** Bumped by every change: a read that began before a change does not fill the cache after it. */
const groupChanges = new Map<string, number>();

/**
 * The group document for an execution's checks, read at most every RECENT_GROUP_MS per group (an execution
 * on the direct path then needs no database read). Changes made through this API process (pause, archive,
 * update, …) are seen at once; those made through another API process within RECENT_GROUP_MS.
 */
export async function getRecentGroupDoc(deps: Pick<ApiDeps, 'store'>, groupId: string): Promise<Document> {
  const hit = recentGroups.get(groupId);
  if (hit && Date.now() - hit.at < RECENT_GROUP_MS) return hit.doc;
  const change = groupChanges.get(groupId);
  const at = Date.now();
  const doc = await getGroupDoc(deps, groupId);
  if (groupChanges.get(groupId) === change) recentGroups.set(groupId, { at, doc });
  if (recentGroups.size > 10_000) recentGroups.clear();
  return doc;
}

/** Called around every change this process makes to a group, so its executions never see the old document. */
export function forgetGroupDoc(groupId: string): void {
  recentGroups.delete(groupId);
  groupChanges.set(groupId, (groupChanges.get(groupId) ?? 0) + 1);
}

/** The group resource: the read-model document with its newest 100 jobs in the given states. */
async function withJobs({ store }: Pick<ApiDeps, 'store'>, d: Document, jobStates: string[]): Promise<Group> {
  const g = resourceOf<GroupRecord>(d);
  const list = await store
    .col(Collections.jobs)
    .find({ groupId: g.id, state: { $in: jobStates } })
    .sort({ submitTime: -1 })
    .limit(100)
    .toArray();
  return { ...g, jobs: list.map(toJob) };
}

const jobStatesOf = (q: Query) => enumArrayParam(q, 'jobStates', JOB_STATES, DEFAULT_JOB_STATE_FILTER)!;

export async function getGroup(deps: ApiDeps, groupId: string, query: Query): Promise<Group> {
  return withJobs(deps, await getGroupDoc(deps, groupId), jobStatesOf(query));
}

export async function getGroupByName(deps: ApiDeps, name: string, query: Query): Promise<Group> {
  const d = await findOr404(deps.store.col(Collections.groups), { name }, `no group is named '${name}'`);
  return withJobs(deps, d, jobStatesOf(query));
}

export async function listGroups(deps: ApiDeps, query: Query): Promise<Page<Group>> {
  const lq = parseListQuery(
    query,
    ['name', 'createdTime', 'state', 'kind', 'scale', 'clusterName'],
    deps.config.MAX_PAGE_SIZE,
    ['createdTime', -1],
  );
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
  return findPage(deps.store.col(Collections.groups), filter, lq, (d) => withJobs(deps, d, jobStates));
}
