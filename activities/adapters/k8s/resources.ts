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
import { DRIVER_CONTAINER, DRIVER_ID_ANNOTATION, Labels, labelValue, Ports, STORAGE_ENV } from './names';
import type { SparkConf } from './spark-conf';

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

/** Driver container resources as Spark sizes a driver pod: memory + max(10%, 384Mi) overhead. */
export function driverResources(conf: SparkConf): V1ResourceRequirements {
  const heap = jvmMiB(conf['spark.driver.memory'] ?? '1g', 'spark.driver.memory');
  const overhead = conf['spark.driver.memoryOverhead']
    ? jvmMiB(conf['spark.driver.memoryOverhead'], 'spark.driver.memoryOverhead')
    : Math.max(Math.ceil(heap * 0.1), 384);
  const memory = `${Math.ceil(heap + overhead)}Mi`;
  const cores = conf['spark.driver.cores'] ?? '1';
  return {
    requests: { cpu: conf['spark.kubernetes.driver.request.cores'] ?? cores, memory },
    limits: { cpu: conf['spark.kubernetes.driver.limit.cores'] ?? cores, memory },
  };
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
  const serviceAccount = c.spec.spark.jobConfig['spark.kubernetes.authenticate.driver.serviceAccountName'];
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
          image: c.image,
          imagePullPolicy: 'IfNotPresent',
          command: [SPARK_SUBMIT],
          args,
          env,
          ports: [...CONTAINER_PORTS, ...extraPorts].map((p) => ({ ...p })),
          resources: driverResources(conf),
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
  c.hasKeys
    ? {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: objectMeta(c, c.names.secret),
        type: 'Opaque',
        stringData: {
          [STORAGE_ENV.ACCESS_KEY]: c.storage?.accessKey ?? '',
          [STORAGE_ENV.SECRET_KEY]: c.storage?.secretKey ?? '',
        },
      }
    : undefined;
