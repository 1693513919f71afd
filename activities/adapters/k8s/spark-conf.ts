// The Spark properties of a k8s driver, as a list of small parts, one concern each. Later parts win:
// our defaults < the cluster's defaults < memory settings < the job's jobConfig < what the pod,
// service and secret depend on (changing those would break the driver).
import { accessRefusalMessage, refusedAccessSettings } from '../../../domain/access-settings';
import { memorySparkConf } from '../../../domain/memory';
import { parseDefaultConf } from '../../../domain/spark-defaults';
import type { ManifestContext } from './context';
import { invalidSpec } from './errors';
import { BIND_ADDRESS_ENV, Labels, Ports, STORAGE_ENV } from './names';

export type SparkConf = Record<string, string>;
export type ConfPart = (c: ManifestContext) => SparkConf;

/** Spark's property naming the driver pod's service account (the cluster's defaults or jobConfig set it). */
export const SERVICE_ACCOUNT_CONF = 'spark.kubernetes.authenticate.driver.serviceAccountName';

/** Spark runs a .py primary resource as a Python (non-JVM) application: its memory overhead default is 0.4. */
export const isNonJvm = ({ main }: ManifestContext) => main.primary.endsWith('.py');

/** The driver pod's image: Spark's driver image property, else its image property (per cluster or job), else ours. */
export const driverImage = (c: ManifestContext, conf: SparkConf): string =>
  conf['spark.kubernetes.driver.container.image'] ?? conf['spark.kubernetes.container.image'] ?? c.image;

export const imageConf: ConfPart = (c) => ({
  'spark.kubernetes.container.image': c.image,
  // The image's home may not be writable; --packages resolves into the ivy directory.
  'spark.jars.ivy': '/tmp/.ivy2',
});

export const storageConf: ConfPart = ({ storage }) => {
  const conf: SparkConf = {};
  if (storage?.endpoint) {
    conf['spark.hadoop.fs.s3a.endpoint'] = storage.endpoint;
    // S3-compatible stores behind a custom endpoint (MinIO, Ceph) rarely serve virtual-host buckets.
    conf['spark.hadoop.fs.s3a.path.style.access'] = 'true';
  }
  if (storage?.region) conf['spark.hadoop.fs.s3a.endpoint.region'] = storage.region;
  return conf;
};

/**
 * Python drivers: Spark's cluster mode sets the overhead factor 0.4 and passes it on to the executors; a
 * factor set by the cluster or the job wins.
 */
export const overheadConf: ConfPart = (c): SparkConf =>
  isNonJvm(c) ? { 'spark.kubernetes.memoryOverheadFactor': '0.4' } : {};

export const clusterDefaultConf: ConfPart = (c) => parseDefaultConf(c.cluster.defaultApplicationConfig);
export const memoryConf: ConfPart = (c) => memorySparkConf(c.spec.spark.memorySettings);
export const jobConf: ConfPart = (c) => c.spec.spark.jobConfig;

/**
 * Throws InvalidSpec when the cluster's defaults or the job's jobConfig hold a setting that would give the pods
 * access the cluster does not allow. The API refuses these first; this catches what was stored before (a
 * schedule, a group, a cluster's allowance narrowed since).
 */
export function checkAccessSettings(c: ManifestContext): void {
  const parts: [string, SparkConf][] = [
    ['defaultApplicationConfig', clusterDefaultConf(c)],
    // An SQL engine's or Connect server's jobConfig is the cluster's defaults (clusterServiceSpec).
    ...(c.spec.role === 'sql-engine' || c.spec.role === 'connect-server'
      ? []
      : ([['jobConfig', jobConf(c)]] as [string, SparkConf][])),
  ];
  for (const [field, conf] of parts) {
    const refused = refusedAccessSettings(conf, c.cluster.allowedAccessSettings);
    if (refused.length) throw invalidSpec(accessRefusalMessage(field, c.cluster.name, refused));
  }
}

/**
 * How executors reach the driver: its service's DNS name and fixed ports; it binds to the pod IP. Like the
 * driver pod Spark's cluster mode makes (submitInDriver): spark-submit loads --packages before it fetches
 * remote (s3a) files, and the driver talks to the API server with the pod's service account.
 */
export const driverConf: ConfPart = ({ names, namespace }) => ({
  'spark.kubernetes.submitInDriver': 'true',
  'spark.app.id': names.appId,
  'spark.driver.host': `${names.service}.${namespace}.svc`,
  'spark.driver.bindAddress': `$(${BIND_ADDRESS_ENV})`,
  'spark.driver.port': String(Ports.DRIVER),
  'spark.driver.blockManager.port': String(Ports.BLOCK_MANAGER),
});

/** Where the executors go and what they are called. */
export const executorPodConf: ConfPart = ({ names, namespace }) => ({
  'spark.kubernetes.namespace': namespace,
  'spark.kubernetes.driver.pod.name': names.pod,
  'spark.kubernetes.executor.podNamePrefix': names.base,
});

/** Executors carry the driver's labels, so they can be found (logs) and deleted (remove). */
export const executorLabelConf: ConfPart = ({ names, idLabels }) => ({
  [`spark.kubernetes.executor.label.${Labels.DRIVER_ID}`]: names.base,
  ...Object.fromEntries(Object.entries(idLabels).map(([k, v]) => [`spark.kubernetes.executor.label.${k}`, v])),
});

/** Executors read the storage keys from the driver's secret, never from a property. */
export const executorSecretConf: ConfPart = ({ names, hasKeys }) =>
  hasKeys
    ? {
        [`spark.kubernetes.executor.secretKeyRef.${STORAGE_ENV.ACCESS_KEY}`]: `${names.secret}:${STORAGE_ENV.ACCESS_KEY}`,
        [`spark.kubernetes.executor.secretKeyRef.${STORAGE_ENV.SECRET_KEY}`]: `${names.secret}:${STORAGE_ENV.SECRET_KEY}`,
      }
    : {};

/** In precedence order: a later part's value wins, the key keeps its first position. */
export const CONF_PARTS: readonly ConfPart[] = [
  imageConf,
  storageConf,
  overheadConf,
  clusterDefaultConf,
  memoryConf,
  jobConf,
  driverConf,
  executorPodConf,
  executorLabelConf,
  executorSecretConf,
];

// Spread, not Object.assign: a jobConfig key such as __proto__ stays a plain property.
export const sparkConf = (c: ManifestContext, parts: readonly ConfPart[] = CONF_PARTS): SparkConf =>
  parts.reduce<SparkConf>((conf, part) => ({ ...conf, ...part(c) }), {});
