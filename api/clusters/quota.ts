// Limits of a cluster: the cluster a request names must exist (404), what the request asks for must fit
// the cluster's resourceQuota (402), and its jobConfig may not grant access the cluster does not allow (409).
import { clusterTypeOf, type StoredCluster } from '../../activities/adapters/cluster-types';
import type { SparkSpec } from '../../domain/types';
import { Collections, type Store } from '../../lib/mongo';
import { findOr404, overLimit } from '../errors';
import { checkAccessSettings } from './access';

/**
 * The cluster a form names must exist (404), the request must fit its resourceQuota (402), and the jobConfig
 * the drivers will run with (when given) may not grant access the cluster does not allow (409).
 */
export async function checkCluster(
  store: Store,
  spec: Pick<SparkSpec, 'clusterName' | 'memorySettings'> & Partial<Pick<SparkSpec, 'jobConfig'>>,
  instances = 1,
): Promise<StoredCluster> {
  const cluster = await findOr404(
    store.col<StoredCluster>(Collections.clusters),
    { name: spec.clusterName },
    `clusterName: cluster '${spec.clusterName}' does not exist`,
  );
  if (spec.jobConfig) checkAccessSettings(cluster, spec.jobConfig);
  const def = clusterTypeOf(cluster.type);
  const need = def.quotaNeed(spec.memorySettings, instances);
  const max = await def.capacity?.(cluster);
  if (max?.memory !== undefined && need.memory > max.memory)
    throw overLimit(
      `the request needs ${Math.ceil(need.memory / 2 ** 20)}Mi of memory, above the ${Math.floor(max.memory / 2 ** 20)}Mi ${max.what} of cluster '${cluster.name}' can ever give`,
    );
  if (max?.cpu !== undefined && need.cpu > max.cpu)
    throw overLimit(
      `the request needs ${need.cpu} CPUs, above the ${max.cpu} ${max.what} of cluster '${cluster.name}' can ever give`,
    );
  const quota = cluster.resourceQuota;
  if (quota) {
    const cpu = quota.limitsCpu ?? quota.requestsCpu;
    const mem = quota.limitsMemory ?? quota.requestsMemory;
    if (cpu !== undefined && need.cpu > cpuOf(cpu)) {
      throw overLimit(
        `the request needs ${need.cpu} CPUs, above the ${cpu} CPUs of cluster '${cluster.name}' resourceQuota`,
      );
    }
    if (mem !== undefined && need.memory > bytesOf(mem)) {
      throw overLimit(
        `the request needs ${Math.ceil(need.memory / 2 ** 20)}Mi of memory, above the ${mem} of cluster '${cluster.name}' resourceQuota`,
      );
    }
    if (quota.limitsPod !== undefined && def.countsPods && need.pods > Number(quota.limitsPod)) {
      throw overLimit(
        `the request needs ${need.pods} pods, above the ${quota.limitsPod} pods of cluster '${cluster.name}' resourceQuota`,
      );
    }
  }
  return cluster;
}

function cpuOf(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}

function bytesOf(q: string): number {
  const m = /^([0-9.eE+-]+)([A-Za-z]*)$/.exec(q);
  if (!m) return Number.POSITIVE_INFINITY;
  const units: Record<string, number> = {
    '': 1,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
    E: 1e18,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    Pi: 2 ** 50,
    Ei: 2 ** 60,
    m: 1e-3,
  };
  return Number(m[1]) * (units[m[2]] ?? 1);
}
