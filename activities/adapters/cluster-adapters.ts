// The adapter each cluster type's drivers are launched with (the type's adapter.ts), listed apart from the types'
// definitions (cluster-types.ts). The definitions are read wherever a cluster is checked or shown, the Spark
// Connect gateway's thread included; adapters only where drivers are driven (the worker's activities through
// registry.ts, the API's launch at submit). An adapter brings its transport with it: @kubernetes/client-node
// alone is ~34 MB of heap, which was half of the gateway thread's and doubled the cost of each of its collections.
import type { ClusterAdapter } from '../../domain/driver';
import { ClusterType } from '../../domain/states';
import type { Config } from '../../lib/config';
import type { AdapterContext } from './cluster-type';
import type { StoredCluster } from './cluster-types';
import { createK8sAdapter } from './k8s/adapter';
import type { k8sSettings } from './k8s/cluster-type';
import { createLocalAdapter } from './local/adapter';
import { threadsOf, type localSettings } from './local/cluster-type';
import { timedAdapter } from './timed';
import { createYarnAdapter } from './yarn/adapter';
import type { yarnSettings } from './yarn/cluster-type';

// One local adapter per worker configuration and thread count, shared by every local cluster of that count.
const localAdapters = new WeakMap<Config, Map<number, ClusterAdapter>>();

export const CLUSTER_ADAPTERS = {
  [ClusterType.LOCAL]: ({ cluster, config }: AdapterContext<typeof localSettings>) => {
    const threads = threadsOf(cluster, config);
    if (!localAdapters.has(config)) localAdapters.set(config, new Map());
    const byThreads = localAdapters.get(config)!;
    if (!byThreads.has(threads))
      byThreads.set(threads, timedAdapter(createLocalAdapter({ ...config, LOCAL_SPARK_THREADS: threads }), 'local'));
    return byThreads.get(threads)!;
  },
  [ClusterType.K8S]: ({ cluster, config, placements }: AdapterContext<typeof k8sSettings>) =>
    timedAdapter(createK8sAdapter({ cluster: { ...cluster, url: cluster.url }, config, placements }), 'k8s'),
  [ClusterType.YARN]: ({ cluster, config }: AdapterContext<typeof yarnSettings>) =>
    timedAdapter(createYarnAdapter({ cluster: { ...cluster, id: cluster.id }, config }), 'yarn'),
} as const satisfies { [T in ClusterType]: (ctx: never) => ClusterAdapter };

/** The adapter of one stored cluster (a new one when its document changes); an unknown type throws. */
export function adapterOf(ctx: Omit<AdapterContext, 'cluster'> & { cluster: StoredCluster }): ClusterAdapter {
  // Each factory reads only its own type's fields of the stored cluster, which holds every type's.
  const make = (CLUSTER_ADAPTERS as unknown as Record<string, ((c: typeof ctx) => ClusterAdapter) | undefined>)[
    ctx.cluster.type
  ];
  if (!make) throw new Error(`unknown cluster type '${ctx.cluster.type}'`);
  return make(ctx);
}
