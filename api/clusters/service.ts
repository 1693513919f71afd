// Clusters (GET, POST /cluster; GET, PUT, DELETE /cluster/{clusterId}): plain documents owned by the API (no
// workflow). Secrets are sealed on the way in (lib/cluster-secrets.ts); names are unique through the
// collection's unique index.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  clusterTypeOf,
  type ClusterView as Cluster,
  type StoredCluster,
} from '../../activities/adapters/cluster-types';
import { parseMemorySettings } from '../../domain/memory';
import type { MemorySettings } from '../../domain/resources';
import { ClusterType, TERMINAL_JOB_STATES } from '../../domain/states';
import { Collections } from '../../lib/mongo';
import type { ApiDeps } from '../deps';
import { conflict, findOr404 } from '../errors';
import { findPage, parseListQuery, searchFilter, type Page, type Query } from '../list';
import { checkClusterType, type ClusterCreate, type ClusterUpdate } from './schemas';
import { checkClusterDefaults } from './access';
import { checkClientKey, checkCredentialsResent } from './credentials';
import { maskSecret, sealClusterSecrets as sealSecrets, unsealClusterSecrets } from '../../lib/cluster-secrets';
import { stopClusterServers } from '../connect/stop';
import { stopClusterEngines } from '../sql/engines/stop';

/** The stored cluster (activities/adapters/cluster-types.ts): the one shape of the `clusters` collection. */
export type ClusterDoc = StoredCluster;

const clustersOf = ({ store }: Pick<ApiDeps, 'store'>) => store.col<ClusterDoc>(Collections.clusters);

/** The stored document → the Cluster resource, secrets masked; the type's own fields from its definition. */
export function toCluster(d: ClusterDoc, localThreads: number): Cluster {
  const def = clusterTypeOf(d.type);
  const config = { LOCAL_SPARK_THREADS: localThreads };
  const storages = Object.fromEntries(
    Object.entries(d.storages ?? {}).map(([k, s]) => [
      k,
      { ...s, accessKey: maskSecret(s.accessKey), secretKey: maskSecret(s.secretKey) },
    ]),
  );
  const c = {
    id: d.id,
    name: d.name,
    description: d.description ?? '',
    sparkMaster: def.sparkMaster(d, config),
    sparkDeployMode: def.sparkDeployMode,
    sparkStorage: d.sparkStorage ?? 's3',
    metastoreName: d.metastoreName,
    storages,
    memorySettings: d.memorySettings ?? ({ dynamicAllocation: false } as MemorySettings),
    defaultApplicationConfig: d.defaultApplicationConfig ?? '',
    type: d.type,
    url: d.url,
    ...def.toView(d, config),
    resourceQuota: d.resourceQuota,
    limitRange: d.limitRange,
    createdTime: d.createdTime,
  };
  // Drops the undefined fields, as the stored documents do.
  return JSON.parse(JSON.stringify(c)) as Cluster;
}

/** Memory settings arrive as form strings and are stored typed. */
function toStored(body: ClusterUpdate) {
  const { memorySettings, ...rest } = body;
  return { ...rest, ...(memorySettings ? { memorySettings: parseMemorySettings(memorySettings) } : {}) };
}

/** The unique name index refuses a second cluster of one name. */
async function nameChecked<T>(name: string | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if ((e as { code?: number }).code === 11000) throw conflict(`name: a cluster named '${name}' already exists`);
    throw e;
  }
}

export async function getClusterDoc(deps: Pick<ApiDeps, 'store'>, id: string): Promise<ClusterDoc> {
  return findOr404(clustersOf(deps), { _id: id }, `cluster '${id}' does not exist`);
}

export async function getCluster(deps: ApiDeps, id: string): Promise<Cluster> {
  return toCluster(await getClusterDoc(deps, id), deps.config.LOCAL_SPARK_THREADS);
}

export async function listClusters(deps: ApiDeps, query: Query): Promise<Page<Cluster>> {
  const { config } = deps;
  const lq = parseListQuery(query, ['name', 'type', 'createdTime', 'id'], config.MAX_PAGE_SIZE, ['createdTime', 1]);
  return findPage(clustersOf(deps), searchFilter(lq.search, ['name', 'description']), lq, (d) =>
    toCluster(d, config.LOCAL_SPARK_THREADS),
  );
}

export async function clusterNames(deps: ApiDeps): Promise<{ names: string[] }> {
  const docs = await clustersOf(deps)
    .find({}, { projection: { name: 1 } })
    .sort({ name: 1 })
    .toArray();
  return { names: docs.map((d) => d.name) };
}

export async function createCluster(deps: ApiDeps, body: ClusterCreate): Promise<{ clusterId: string }> {
  const type = body.type ?? ClusterType.K8S;
  checkClusterDefaults({ ...body, type } as ClusterDoc);
  checkClientKey(body);
  const id = randomUUID().replace(/-/g, '');
  const stored = toStored(body) as Partial<ClusterDoc>;
  const doc = {
    ...sealSecrets(deps.config.SECRET_KEY, stored),
    ...clusterTypeOf(type).defaults(stored),
    sparkStorage: body.sparkStorage ?? 's3',
    _id: id,
    id,
    createdTime: Date.now(),
  } as unknown as ClusterDoc;
  await nameChecked(body.name, () => clustersOf(deps).insertOne(JSON.parse(JSON.stringify(doc))));
  return { clusterId: id };
}

/** The fields given replace the stored ones; the result must still be a valid cluster. */
export async function updateCluster(deps: ApiDeps, id: string, body: ClusterUpdate): Promise<void> {
  const stored = await getClusterDoc(deps, id);
  checkCredentialsResent(stored, body);
  const merged = { ...stored, ...sealSecrets(deps.config.SECRET_KEY, toStored(body), stored) } as ClusterDoc;
  const check = z.looseObject({ type: z.string() }).superRefine(checkClusterType).safeParse(merged);
  if (!check.success) throw check.error;
  checkClusterDefaults(merged);
  if (body.clientKey !== undefined || body.clientKeyPassphrase !== undefined)
    checkClientKey(unsealClusterSecrets(deps.config.SECRET_KEY, merged));
  Object.assign(merged, clusterTypeOf(merged.type).defaults(merged));
  await nameChecked(body.name, () =>
    clustersOf(deps).replaceOne({ _id: stored._id }, JSON.parse(JSON.stringify(merged))),
  );
}

/** Only a cluster that no running job, active group or live schedule uses may go (its SQL engines stop); `default` never. */
export async function deleteCluster(deps: ApiDeps, id: string): Promise<void> {
  const { store } = deps;
  const c = await getClusterDoc(deps, id);
  if (c.name === 'default')
    throw conflict('the default cluster cannot be deleted: jobs without a clusterName run on it');
  const using = await Promise.all([
    store.col(Collections.jobs).countDocuments({ clusterName: c.name, state: { $nin: [...TERMINAL_JOB_STATES] } }),
    store.col(Collections.groups).countDocuments({ clusterName: c.name, state: 'ACTIVE' }),
    store.col(Collections.schedules).countDocuments({ clusterName: c.name, state: { $ne: 'DISABLED' } }),
  ]);
  if (using.some((n) => n > 0)) {
    throw conflict(
      `cluster '${c.name}' is in use by ${using[0]} running jobs, ${using[1]} active groups and ${using[2]} schedules`,
    );
  }
  // SQL engines and Spark Connect servers belong to the cluster: they stop with it.
  await Promise.all([stopClusterEngines(deps, c.id), stopClusterServers(deps, c.id)]);
  await clustersOf(deps).deleteOne({ _id: c._id });
  // Where its drivers were launched (activities/adapters/placements.ts): none of them is left to remove.
  await store
    .col(Collections.placements)
    .deleteMany({ _id: { $regex: `^${c.id.replace(/[^A-Za-z0-9]/g, '\\$&')}/` } as never });
}
