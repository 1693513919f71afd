// Cluster endpoints (4.21–4.24): parse, call the service, answer.
import { z } from 'zod';
import { ClusterView, clusterTypeInfo, SETTING_KINDS } from '../../activities/adapters/cluster-types';
import { CLUSTER_TYPES, SQL_ENGINES } from '../../domain/states';
import type { ApiDeps } from '../deps';
import { IdResponse, PageOf } from '../resources';
import { LIST_QUERY, route } from '../routing';
import { createNamespace, NamespaceCreate } from './namespace';
import { ClusterCreate, ClusterUpdate } from './schemas';
import { clusterNames, createCluster, deleteCluster, getCluster, listClusters, updateCluster } from './service';

export const clusterRoutes = (deps: ApiDeps) => [
  route({
    method: 'post',
    path: '/cluster',
    role: 'admin',
    tag: 'clusters',
    summary: 'Create a cluster (4.21)',
    body: { kind: 'json', schema: ClusterCreate },
    response: IdResponse('clusterId'),
    errors: [400, 409],
    handler: ({ body }) => createCluster(deps, body),
  }),
  route({
    method: 'get',
    path: '/cluster',
    role: 'viewer',
    tag: 'clusters',
    summary: 'List clusters (4.22)',
    query: LIST_QUERY,
    response: PageOf(ClusterView),
    errors: [409],
    handler: ({ query }) => listClusters(deps, query),
  }),
  // Before /cluster/:clusterId, which would read `names` as an id.
  route({
    method: 'get',
    path: '/cluster/names',
    role: 'viewer',
    tag: 'clusters',
    summary: 'Names of all clusters',
    response: z.object({ names: z.array(z.string()) }),
    handler: () => clusterNames(deps),
  }),
  // Before /cluster/:clusterId too. What each type can do, so clients (the console) need not know the types.
  route({
    method: 'get',
    path: '/cluster/types',
    role: 'viewer',
    tag: 'clusters',
    summary: 'Cluster types, the settings of each and what each can do',
    response: z.object({
      types: z.array(
        z.object({
          type: z.enum(CLUSTER_TYPES),
          title: z.string().describe('What its drivers are, in a few words'),
          sparkDeployMode: z.enum(['client', 'cluster']),
          url: z.string().nullable().describe("What the type's `url` is; null: the type sets it itself (local)"),
          settings: z.array(z.string()),
          kinds: z
            .record(z.string(), z.enum(SETTING_KINDS))
            .describe('How a form shows each setting: text, number, map (key=value lines), list, secret'),
          namespaces: z.boolean(),
          sqlEngines: z.array(z.enum(SQL_ENGINES)),
          connect: z.boolean(),
          driversOnWorkerHost: z.boolean(),
          sparkUi: z
            .enum(['driver-folder', 'pod'])
            .nullable()
            .describe("How the API reaches a running driver's Spark UI; null: not proxied"),
        }),
      ),
    }),
    handler: async () => ({ types: clusterTypeInfo() }),
  }),
  route({
    method: 'post',
    path: '/cluster/namespace',
    role: 'admin',
    tag: 'clusters',
    summary: 'Create a namespace on a k8s cluster (clusterName, else the only k8s cluster)',
    body: { kind: 'json', schema: NamespaceCreate },
    errors: [400, 404, 409],
    handler: ({ body }) => createNamespace(deps, body),
  }),
  route({
    method: 'get',
    path: '/cluster/:clusterId',
    role: 'viewer',
    tag: 'clusters',
    summary: 'Get a cluster by id (4.23)',
    response: ClusterView,
    errors: [404],
    handler: ({ params }) => getCluster(deps, params.clusterId),
  }),
  route({
    method: 'put',
    path: '/cluster/:clusterId',
    role: 'admin',
    tag: 'clusters',
    summary: 'Update a cluster (4.24): the fields given replace the stored ones',
    body: { kind: 'json', schema: ClusterUpdate },
    errors: [400, 404, 409],
    handler: ({ params, body }) => updateCluster(deps, params.clusterId, body),
  }),
  route({
    method: 'delete',
    path: '/cluster/:clusterId',
    role: 'admin',
    tag: 'clusters',
    summary: 'Delete a cluster that no job, group or schedule uses',
    errors: [404, 409],
    handler: ({ params }) => deleteCluster(deps, params.clusterId),
  }),
];
