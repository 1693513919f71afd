// The API's side of each cluster type's rule on Spark settings (its ClusterTypeDef's refusedConf): on k8s,
// settings that would give a driver's pods access beyond their own (domain/access-settings.ts) unless the
// cluster's allowedAccessSettings allows their kind; on YARN, settings that move drivers to another queue or
// ResourceManager. Refused (409, naming each key) before anything is stored or started.
import { clusterTypeOf } from '../../activities/adapters/cluster-types';
import type { StoredCluster } from '../../activities/adapters/cluster-types';
import { parseDefaultConf } from '../../domain/spark-defaults';
import { conflict } from '../errors';

/** Throws 409 when `conf` (from the request's `field`) holds a setting the cluster refuses. */
export function checkAccessSettings(cluster: StoredCluster, conf: Record<string, string>, field = 'jobConfig'): void {
  const refused = clusterTypeOf(cluster.type).refusedConf(cluster, conf, field);
  if (refused) throw conflict(refused);
}

/** The cluster's own defaults (every driver's, and all its SQL engines' settings) against its rule. */
export const checkClusterDefaults = (cluster: StoredCluster): void =>
  checkAccessSettings(cluster, parseDefaultConf(cluster.defaultApplicationConfig ?? ''), 'defaultApplicationConfig');
