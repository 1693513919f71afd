// Clusters (spec §2.8, §4.21–4.24): plain documents owned by the API. Secret-bearing fields are stored
// encrypted with SECRET_KEY and never returned in clear: responses show MASK where a value is set.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { CLUSTER_TYPES, ClusterType, TERMINAL_JOB_STATES } from '../../domain/states';
import { parseMemorySettings } from '../../domain/memory';
import { maskSecret as mask, sealClusterSecrets as sealSecrets } from '../../lib/cluster-secrets';
import { Collections } from '../../lib/mongo';
import type { ApiDeps } from '../app';
import { conflict, notFound } from '../errors';
import { findPage, parseListQuery, searchFilter } from '../list';
import { LIST_QUERY, route } from '../routing';
import { IdResponse, MemorySettings, MemorySettingsCreation, name, PageOf, quantity } from '../schemas';

const Storage = z
  .object({
    sparkBucket: z.string().trim().min(1).max(255).optional(),
    dataBucket: z.string().trim().min(1).max(255).optional(),
    extraBuckets: z.array(z.string().trim().min(1).max(255)).max(100).optional(),
    type: z.enum(['s3']).default('s3'),
    endpoint: z.url('must be a URL such as https://s3.example.com').optional(),
    region: z.string().trim().max(64).optional(),
    accessKey: z.string().max(4096).optional(),
    secretKey: z.string().max(4096).optional(),
  })
  .strict();

const LimitRangeItem = z
  .object({
    defaultLimit: quantity('defaultLimit'),
    defaultRequest: quantity('defaultRequest'),
    minRequest: quantity('minRequest'),
    maxLimit: quantity('maxLimit'),
    maxLimitRequestRatio: quantity('maxLimitRequestRatio'),
  })
  .partial()
  .strict();

const ClusterFields = {
  name,
  description: z.string().max(4096).optional(),
  storages: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'storage keys are 1-64 letters, digits, _ . -'), Storage).optional(),
  sparkStorage: z.string().trim().min(1).max(64).optional(),
  metastoreName: z.string().trim().max(128).optional(),
  memorySettings: MemorySettingsCreation.optional(),
  defaultApplicationConfig: z.string().max(16384).optional(),
  type: z.enum(CLUSTER_TYPES).default(ClusterType.K8S),
  url: z.string().trim().max(2048).optional(),
  caCert: z.string().max(65536).optional(),
  clientCert: z.string().max(65536).optional(),
  clientKey: z.string().max(65536).optional(),
  clientKeyAlgorithm: z.string().max(32).optional(),
  clientKeyPassphrase: z.string().max(4096).optional(),
  username: z.string().max(256).optional(),
  password: z.string().max(4096).optional(),
  resourceQuota: z
    .object({
      limitsPod: z.string().trim().regex(/^[0-9]+$/, 'must be a whole number of pods'),
      limitsCpu: quantity('limitsCpu'),
      limitsMemory: quantity('limitsMemory'),
      requestsCpu: quantity('requestsCpu'),
      requestsMemory: quantity('requestsMemory'),
    })
    .partial()
    .strict()
    .optional(),
  limitRange: z.object({ cpuLimitRange: LimitRangeItem.optional(), memoryLimitRange: LimitRangeItem.optional() }).strict().optional(),
};

const checkUrl = (c: { type?: string; url?: string }, ctx: z.RefinementCtx) => {
  if (c.type === ClusterType.K8S) {
    if (!c.url) ctx.addIssue({ code: 'custom', path: ['url'], message: 'is required for a k8s cluster (the API server URL)' });
    else if (!/^https?:\/\/[^\s/]+/.test(c.url)) ctx.addIssue({ code: 'custom', path: ['url'], message: `'${c.url}' is not an http(s) URL of a Kubernetes API server` });
  }
};

export const ClusterCreate = z.object(ClusterFields).strict().superRefine(checkUrl);
export const ClusterUpdate = z
  .object({ ...ClusterFields, name: name.optional(), type: z.enum(CLUSTER_TYPES).optional() })
  .strict();

export const Cluster = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  sparkMaster: z.string(),
  sparkDeployMode: z.string(),
  sparkStorage: z.string(),
  metastoreName: z.string().optional(),
  storages: z.record(z.string(), Storage),
  memorySettings: MemorySettings,
  defaultApplicationConfig: z.string(),
  type: z.enum(CLUSTER_TYPES),
  url: z.string(),
  caCert: z.string().optional(),
  clientCert: z.string().optional(),
  clientKey: z.string().optional(),
  clientKeyAlgorithm: z.string().optional(),
  clientKeyPassphrase: z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  resourceQuota: z.record(z.string(), z.string()).optional(),
  limitRange: z.record(z.string(), z.record(z.string(), z.string())).optional(),
  createdTime: z.number().int(),
});

type ClusterDoc = Record<string, unknown> & { _id: string; id: string; name: string; type: string; url: string };

export function toCluster(d: ClusterDoc, localThreads: number): z.infer<typeof Cluster> {
  const storages = Object.fromEntries(
    Object.entries((d.storages ?? {}) as Record<string, Record<string, unknown>>).map(([k, s]) => [
      k,
      { ...s, accessKey: mask(s.accessKey), secretKey: mask(s.secretKey) },
    ]),
  );
  const c = {
    id: d.id,
    name: d.name,
    description: (d.description as string) ?? '',
    sparkMaster: d.type === ClusterType.LOCAL ? `local[${localThreads}]` : `k8s://${d.url}`,
    sparkDeployMode: d.type === ClusterType.LOCAL ? 'client' : 'cluster',
    sparkStorage: (d.sparkStorage as string) ?? 's3',
    metastoreName: d.metastoreName as string | undefined,
    storages,
    memorySettings: (d.memorySettings as z.infer<typeof MemorySettings>) ?? { dynamicAllocation: false },
    defaultApplicationConfig: (d.defaultApplicationConfig as string) ?? '',
    type: d.type as ClusterType,
    url: d.url,
    caCert: d.caCert as string | undefined,
    clientCert: d.clientCert as string | undefined,
    clientKey: mask(d.clientKey),
    clientKeyAlgorithm: d.clientKeyAlgorithm as string | undefined,
    clientKeyPassphrase: mask(d.clientKeyPassphrase),
    username: d.username as string | undefined,
    password: mask(d.password),
    resourceQuota: d.resourceQuota as Record<string, string> | undefined,
    limitRange: d.limitRange as Record<string, Record<string, string>> | undefined,
    createdTime: d.createdTime as number,
  };
  return JSON.parse(JSON.stringify(c)) as z.infer<typeof Cluster>;
}

function toStored(body: z.infer<typeof ClusterUpdate>) {
  const { memorySettings, ...rest } = body;
  return {
    ...rest,
    ...(memorySettings ? { memorySettings: parseMemorySettings(memorySettings) } : {}),
  };
}

export const clusterRoutes = ({ store, config }: ApiDeps) => {
  const clusters = store.col<ClusterDoc>(Collections.clusters);
  const get = async (id: string) => {
    const d = await clusters.findOne({ _id: id });
    if (!d) throw notFound(`cluster '${id}' does not exist`);
    return d;
  };
  return [
    route({
      method: 'post',
      path: '/cluster',
      tag: 'clusters',
      summary: 'Create a cluster (4.21)',
      body: { kind: 'json', schema: ClusterCreate },
      response: IdResponse('clusterId'),
      errors: [400, 402, 409],
      handler: async ({ body }) => {
        const id = randomUUID().replace(/-/g, '');
        const doc = {
          ...sealSecrets(config.SECRET_KEY, toStored(body)),
          url: body.type === ClusterType.LOCAL ? (body.url ?? 'local') : body.url,
          sparkStorage: body.sparkStorage ?? 's3',
          _id: id,
          id,
          createdTime: Date.now(),
        } as unknown as ClusterDoc;
        try {
          await clusters.insertOne(JSON.parse(JSON.stringify(doc)));
        } catch (e) {
          if ((e as { code?: number }).code === 11000) throw conflict(`name: a cluster named '${body.name}' already exists`);
          throw e;
        }
        return { clusterId: id };
      },
    }),
    route({
      method: 'get',
      path: '/cluster',
      tag: 'clusters',
      summary: 'List clusters (4.22)',
      query: LIST_QUERY,
      response: PageOf(Cluster),
      errors: [409],
      handler: async ({ query }) => {
        const lq = parseListQuery(query, ['name', 'type', 'createdTime', 'id'], config.MAX_PAGE_SIZE, ['createdTime', 1]);
        return findPage(clusters, searchFilter(lq.search, ['name', 'description']), lq, (d) => toCluster(d, config.LOCAL_SPARK_THREADS));
      },
    }),
    route({
      method: 'get',
      path: '/cluster/:clusterId',
      tag: 'clusters',
      summary: 'Get a cluster by id (4.23)',
      response: Cluster,
      errors: [404],
      handler: async ({ params }) => toCluster(await get(params.clusterId), config.LOCAL_SPARK_THREADS),
    }),
    route({
      method: 'put',
      path: '/cluster/:clusterId',
      tag: 'clusters',
      summary: 'Update a cluster (4.24): the fields given replace the stored ones',
      body: { kind: 'json', schema: ClusterUpdate },
      errors: [400, 402, 404, 409],
      handler: async ({ params, body }) => {
        const stored = await get(params.clusterId);
        const merged = { ...stored, ...sealSecrets(config.SECRET_KEY, toStored(body), stored) } as ClusterDoc;
        const check = z.object({ type: z.string(), url: z.string().optional() }).superRefine(checkUrl).safeParse(merged);
        if (!check.success) throw check.error;
        if (merged.type === ClusterType.LOCAL && !merged.url) merged.url = 'local';
        try {
          await clusters.replaceOne({ _id: stored._id }, JSON.parse(JSON.stringify(merged)));
        } catch (e) {
          if ((e as { code?: number }).code === 11000) throw conflict(`name: a cluster named '${body.name}' already exists`);
          throw e;
        }
      },
    }),
    route({
      method: 'delete',
      path: '/cluster/:clusterId',
      tag: 'clusters',
      summary: 'Delete a cluster that no job, group or schedule uses',
      errors: [404, 409],
      handler: async ({ params }) => {
        const c = await get(params.clusterId);
        if (c.name === 'default') throw conflict('the default cluster cannot be deleted: jobs without a clusterName run on it');
        const using = await Promise.all([
          store.col(Collections.jobs).countDocuments({ clusterName: c.name, state: { $nin: [...TERMINAL_JOB_STATES] } }),
          store.col(Collections.groups).countDocuments({ clusterName: c.name, state: 'ACTIVE' }),
          store.col(Collections.schedules).countDocuments({ clusterName: c.name, state: { $ne: 'DISABLED' } }),
        ]);
        if (using.some((n) => n > 0)) {
          throw conflict(`cluster '${c.name}' is in use by ${using[0]} running jobs, ${using[1]} active groups and ${using[2]} schedules`);
        }
        await clusters.deleteOne({ _id: c._id });
      },
    }),
  ];
};
