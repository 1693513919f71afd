// POST /cluster/namespace: creates a Kubernetes namespace on a k8s cluster, through the cluster's API
// server with the connection the k8s adapter uses. Ilum's body is `{name}` alone; `clusterName` (ours,
// optional) picks the cluster, else the only k8s cluster there is. Local clusters have no namespaces (409).
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { connect } from '../../activities/adapters/k8s/client';
import { CLUSTER_TYPE_DEFS, clusterTypeOf, type StoredCluster } from '../../activities/adapters/cluster-types';
import { CLUSTER_TYPES } from '../../domain/states';
import { unsealClusterSecrets } from '../../lib/cluster-secrets';
import { Collections } from '../../lib/mongo';
import type { ApiDeps } from '../deps';
import { K8S_NAMESPACE_NAME } from './schemas';
import { conflict, findOr404 } from '../errors';

export const NamespaceCreate = z
  .object({
    name: z
      .string()
      .max(63, 'must be at most 63 characters')
      .regex(
        K8S_NAMESPACE_NAME,
        'must be a DNS-1123 label: lower-case letters, digits and -, starting and ending alphanumeric',
      ),
    clusterName: z.string().trim().min(1).max(128).optional(),
  })
  .strict();
export type NamespaceCreate = z.infer<typeof NamespaceCreate>;

type ClusterDoc = StoredCluster;

/** The types whose clusters have namespaces (their capabilities say). */
const withNamespaces = CLUSTER_TYPES.filter((t) => CLUSTER_TYPE_DEFS[t].capabilities.namespaces);

/** How long the API server may take to answer. */
const REQUEST_TIMEOUT_MS = 15_000;

/** The cluster the request names, else the only k8s cluster; 404 for an unknown name, 409 for a local one. */
async function targetCluster(deps: Pick<ApiDeps, 'store'>, clusterName: string | undefined): Promise<ClusterDoc> {
  const clusters = deps.store.col<ClusterDoc>(Collections.clusters);
  if (clusterName !== undefined) {
    const c = await findOr404(clusters, { name: clusterName }, `clusterName: cluster '${clusterName}' does not exist`);
    if (!clusterTypeOf(c.type).capabilities.namespaces)
      throw conflict(
        `cluster '${clusterName}' is of type ${c.type}; only ${withNamespaces.join(' and ')} clusters have namespaces`,
      );
    return c;
  }
  const k8s = await clusters
    .find({ type: { $in: withNamespaces } })
    .limit(2)
    .toArray();
  if (k8s.length === 0) throw conflict('there is no k8s cluster to create a namespace on; only k8s clusters have them');
  if (k8s.length > 1) throw conflict('clusterName: there are several k8s clusters; name the one to create it on');
  return k8s[0];
}

/** Creates the namespace; one that exists already, a refusal or an unreachable API server answers 409. */
export async function createNamespace(deps: Pick<ApiDeps, 'store' | 'config'>, body: NamespaceCreate): Promise<void> {
  const doc = await targetCluster(deps, body.clusterName);
  const cluster = unsealClusterSecrets(deps.config.SECRET_KEY, doc);
  const conn = connect(cluster, cluster.namespace ?? deps.config.K8S_NAMESPACE, REQUEST_TIMEOUT_MS);
  try {
    await conn.client().createNamespace({
      body: {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: body.name, labels: { 'app.kubernetes.io/managed-by': 'spark-orchestrator' } },
      },
    });
  } catch (e) {
    if (e instanceof ApplicationFailure) throw conflict(`cluster '${doc.name}' cannot be connected to: ${e.message}`);
    const d = conn.describe(e, `create namespace ${body.name}`);
    if (d.code === 409) throw conflict(`namespace '${body.name}' already exists on cluster '${doc.name}'`);
    throw conflict(`cluster '${doc.name}' did not create namespace '${body.name}': ${d.message}`);
  }
}
