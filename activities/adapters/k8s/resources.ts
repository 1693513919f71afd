// The Kubernetes objects of a driver: the pod running spark-submit, the headless service executors
// reach it through, and the secret with the storage keys.
import type {
  V1ContainerPort,
  V1EnvVar,
  V1Pod,
  V1ResourceRequirements,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import type { ManifestContext } from './context';
import { invalidSpec } from './errors';
import { DIRECT_ENV, DRIVER_CONTAINER, DRIVER_ID_ANNOTATION, Labels, labelValue, Ports, STORAGE_ENV } from './names';
import { driverImage, isNonJvm, SERVICE_ACCOUNT_CONF, type SparkConf } from './spark-conf';

const SPARK_SUBMIT = '/opt/spark/bin/spark-submit';

/** JVM size (`2g`, `512m`, `1024` = MiB as Spark reads it) in MiB. */
export function jvmMiB(s: string, field: string): number {
  const m = /^\s*(\d+)\s*([kmgtp]?)b?\s*$/i.exec(s);
  if (!m) throw invalidSpec(`invalid ${field} '${s}': not a JVM memory size such as 512m or 2g`);
  const n = Number(m[1]);
  const unit = m[2].toLowerCase();
  const factor: Record<string, number> = { '': 1, k: 1 / 1024, m: 1, g: 1024, t: 1024 ** 2, p: 1024 ** 3 };
  return n * factor[unit];
}

/** Spark's default overhead factors: JVM drivers, and Python (or R) drivers, whose workers live outside the heap. */
export const JVM_OVERHEAD_FACTOR = 0.1;
export const NON_JVM_OVERHEAD_FACTOR = 0.4;
const MIN_OVERHEAD_MIB = 384;

function factor(conf: SparkConf, key: string): number | undefined {
  const v = conf[key];
  if (v === undefined) return undefined;
  const f = Number(v);
  if (!Number.isFinite(f) || f <= 0) throw invalidSpec(`invalid ${key} '${v}': not a positive number`);
  return f;
}

/**
 * Driver container resources as Spark's BasicDriverFeatureStep sizes a driver pod: memory and its overhead
 * (spark.driver.memoryOverhead, else max(factor × memory, 384Mi), the factor being
 * spark.driver.memoryOverheadFactor, else spark.kubernetes.memoryOverheadFactor, else 0.1, or 0.4 for a
 * Python driver) requested and limited; cores requested (spark.kubernetes.driver.request.cores, else
 * spark.driver.cores), limited only when spark.kubernetes.driver.limit.cores asks for it.
 */
export function driverResources(conf: SparkConf, nonJvm = false): V1ResourceRequirements {
  const heap = jvmMiB(conf['spark.driver.memory'] ?? '1g', 'spark.driver.memory');
  const f =
    factor(conf, 'spark.driver.memoryOverheadFactor') ??
    factor(conf, 'spark.kubernetes.memoryOverheadFactor') ??
    (nonJvm ? NON_JVM_OVERHEAD_FACTOR : JVM_OVERHEAD_FACTOR);
  const overhead = conf['spark.driver.memoryOverhead']
    ? jvmMiB(conf['spark.driver.memoryOverhead'], 'spark.driver.memoryOverhead')
    : Math.max(Math.floor(f * heap), MIN_OVERHEAD_MIB);
  const memory = `${Math.ceil(heap + overhead)}Mi`;
  const cpu = conf['spark.kubernetes.driver.request.cores'] ?? conf['spark.driver.cores'] ?? '1';
  const limit = conf['spark.kubernetes.driver.limit.cores'];
  return { requests: { cpu, memory }, limits: { ...(limit ? { cpu: limit } : {}), memory } };
}

/** Labels of every object of the driver. */
export const objectLabels = ({ spec, names, idLabels }: ManifestContext): Record<string, string> => ({
  [Labels.MANAGED_BY]: 'spark-orchestrator',
  [Labels.DRIVER_ID]: names.base,
  [Labels.ROLE]: spec.role,
  ...(spec.engine ? { [Labels.ENGINE]: spec.engine.type } : {}),
  ...idLabels,
});

export const objectMeta = (c: ManifestContext, name: string, labels = objectLabels(c)) => ({
  name,
  namespace: c.namespace,
  labels,
  annotations: { [DRIVER_ID_ANNOTATION]: c.spec.driverId },
});

const CONTAINER_PORTS = [
  { name: 'driver-rpc', containerPort: Ports.DRIVER },
  { name: 'blockmanager', containerPort: Ports.BLOCK_MANAGER },
  { name: 'spark-ui', containerPort: Ports.UI },
];
const SERVICE_PORTS = [
  { name: 'driver-rpc', port: Ports.DRIVER, targetPort: Ports.DRIVER },
  { name: 'blockmanager', port: Ports.BLOCK_MANAGER, targetPort: Ports.BLOCK_MANAGER },
  { name: 'spark-ui', port: Ports.UI, targetPort: Ports.UI },
];

/** `extraPorts`: what the driver serves besides Spark's own ports (an SQL engine's). */
export function podManifest(
  c: ManifestContext,
  conf: SparkConf,
  args: string[],
  env: V1EnvVar[],
  extraPorts: V1ContainerPort[] = [],
): V1Pod {
  // Spark's own property, from the cluster's defaultApplicationConfig or the job's jobConfig.
  const serviceAccount = conf[SERVICE_ACCOUNT_CONF];
  const labels = {
    ...objectLabels(c),
    [Labels.SPARK_ROLE]: 'driver',
    [Labels.SPARK_APP_SELECTOR]: labelValue(conf['spark.app.id']),
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: objectMeta(c, c.names.pod, labels),
    spec: {
      restartPolicy: 'Never',
      ...(serviceAccount ? { serviceAccountName: serviceAccount } : {}),
      containers: [
        {
          name: DRIVER_CONTAINER,
          image: driverImage(c, conf),
          imagePullPolicy: 'IfNotPresent',
          command: [SPARK_SUBMIT],
          args,
          env,
          ports: [...CONTAINER_PORTS, ...extraPorts].map((p) => ({ ...p })),
          resources: driverResources(conf, isNonJvm(c)),
        },
      ],
    },
  };
}

/** Headless: executors resolve the driver pod's own IP by the service's DNS name. */
export const serviceManifest = (c: ManifestContext): V1Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: objectMeta(c, c.names.service),
  spec: {
    clusterIP: 'None',
    // Executors resolve the driver as soon as it listens, before any readiness.
    publishNotReadyAddresses: true,
    selector: { [Labels.DRIVER_ID]: c.names.base, [Labels.SPARK_ROLE]: 'driver' },
    ports: SERVICE_PORTS.map((p) => ({ ...p })),
  },
});

/** Only when the storage has keys. */
export const secretManifest = (c: ManifestContext): V1Secret | undefined =>
  c.hasKeys || c.directSecret
    ? {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: objectMeta(c, c.names.secret),
        type: 'Opaque',
        stringData: {
          ...(c.hasKeys
            ? {
                [STORAGE_ENV.ACCESS_KEY]: c.storage?.accessKey ?? '',
                [STORAGE_ENV.SECRET_KEY]: c.storage?.secretKey ?? '',
              }
            : {}),
          ...(c.directSecret ? { [DIRECT_ENV.SECRET]: c.directSecret } : {}),
        },
      }
    : undefined;
