// The API's side of the access rule (domain/access-settings.ts): Spark settings that would give a k8s driver's
// pods access beyond their own are refused (409, naming each key) before anything is stored or started, unless
// the cluster's allowedAccessSettings allows their kind. Local clusters run drivers as host processes, where
// none of these settings means anything.
import { accessRefusalMessage, refusedAccessSettings } from '../../domain/access-settings';
import { parseDefaultConf } from '../../domain/spark-defaults';
import { ClusterType } from '../../domain/states';
import { conflict } from '../errors';

export interface AccessCluster {
  name: string;
  type: string;
  allowedAccessSettings?: unknown;
  defaultApplicationConfig?: unknown;
}

const allowedOf = (c: AccessCluster): string[] =>
  Array.isArray(c.allowedAccessSettings) ? c.allowedAccessSettings.map(String) : [];

/** Throws 409 when `conf` (from the request's `field`) holds a setting the k8s cluster does not allow. */
export function checkAccessSettings(cluster: AccessCluster, conf: Record<string, string>, field = 'jobConfig'): void {
  if (cluster.type !== ClusterType.K8S) return;
  const refused = refusedAccessSettings(conf, allowedOf(cluster));
  if (refused.length) throw conflict(accessRefusalMessage(field, cluster.name, refused));
}

/** The cluster's own defaults (every driver's, and all its SQL engines' settings) against its allowance. */
export const checkClusterDefaults = (cluster: AccessCluster): void =>
  checkAccessSettings(
    cluster,
    parseDefaultConf(typeof cluster.defaultApplicationConfig === 'string' ? cluster.defaultApplicationConfig : ''),
    'defaultApplicationConfig',
  );
