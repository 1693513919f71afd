// Chooses the adapter of a cluster by its `type`: one local adapter for every local cluster, one k8s
// adapter per k8s cluster document (its secrets unsealed), rebuilt when the document changes.
import { ApplicationFailure } from '@temporalio/activity';
import { FailureType, type ClusterAdapter } from '../../domain/driver';
import { ClusterType } from '../../domain/states';
import { unsealClusterSecrets } from '../../lib/cluster-secrets';
import type { Config } from '../../lib/config';
import { Collections, type Store } from '../../lib/mongo';
import { createK8sAdapter } from './k8s/adapter';
import type { K8sCluster } from './k8s/options';
import { createLocalAdapter } from './local/adapter';
import { timedAdapter } from './timed';

type ClusterDoc = Record<string, unknown> & { name: string; type: string };

/** The adapter of a cluster by name; a cluster that does not exist is a non-retryable ClusterNotFound failure. */
export type AdapterLookup = (clusterName: string) => Promise<ClusterAdapter>;

export function createAdapterRegistry(config: Config, store: Store): AdapterLookup {
  // One local adapter per thread count (a local cluster's `threads`, else LOCAL_SPARK_THREADS).
  const locals = new Map<number, ClusterAdapter>();
  const localFor = (threads: number) => {
    if (!locals.has(threads))
      locals.set(threads, timedAdapter(createLocalAdapter({ ...config, LOCAL_SPARK_THREADS: threads }), 'local'));
    return locals.get(threads)!;
  };
  // k8s adapters are cached per cluster document; a changed cluster (updatedAt) builds a new one.
  const k8s = new Map<string, { stamp: string; adapter: ClusterAdapter }>();
  return async function adapterFor(clusterName: string): Promise<ClusterAdapter> {
    const doc = await store.col<ClusterDoc>(Collections.clusters).findOne({ name: clusterName });
    if (!doc)
      throw ApplicationFailure.nonRetryable(`cluster '${clusterName}' does not exist`, FailureType.CLUSTER_NOT_FOUND);
    if (doc.type === ClusterType.LOCAL)
      return localFor(typeof doc.threads === 'number' ? doc.threads : config.LOCAL_SPARK_THREADS);
    const stamp = JSON.stringify(doc);
    const cached = k8s.get(clusterName);
    if (cached && cached.stamp === stamp) return cached.adapter;
    const adapter = timedAdapter(
      createK8sAdapter({ cluster: unsealClusterSecrets(config.SECRET_KEY, doc) as unknown as K8sCluster, config }),
      'k8s',
    );
    k8s.set(clusterName, { stamp, adapter });
    return adapter;
  };
}
