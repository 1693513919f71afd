// What a driver's Kubernetes objects are called and labelled. Every name derives from the driverId,
// so a retried launch finds what the first one created instead of starting a second driver.
import { createHash } from 'node:crypto';

export const DRIVER_CONTAINER = 'spark-driver';
export const Ports = { DRIVER: 7078, BLOCK_MANAGER: 7079, UI: 4040 } as const;
/** Where each SQL engine listens in its pod, and on its service: HiveServer2 Thrift, Trino's HTTP. */
export const ENGINE_PORTS = { SPARK_SQL: 10000, TRINO: 8080 } as const;
/** The driver's pod IP, which Kubernetes expands in spark.driver.bindAddress. */
export const BIND_ADDRESS_ENV = 'SPARK_DRIVER_BIND_ADDRESS';
/** Environment variables (and keys of the storage secret) holding the storage's keys. */
export const STORAGE_ENV = { ACCESS_KEY: 'AWS_ACCESS_KEY_ID', SECRET_KEY: 'AWS_SECRET_ACCESS_KEY' } as const;
/** A runner's direct channel (runner/spark_runner/config.py): its secret (a key of the driver's secret too) and bind address. */
export const DIRECT_ENV = { SECRET: 'RUNNER_DIRECT_SECRET', HOST: 'RUNNER_DIRECT_HOST' } as const;

export const LABEL_PREFIX = 'spark-orchestrator.io';
/** Label keys on driver pods, services, secrets (and, through Spark, on executors). */
export const Labels = {
  DRIVER_ID: `${LABEL_PREFIX}/driver-id`,
  JOB_ID: `${LABEL_PREFIX}/job-id`,
  GROUP_ID: `${LABEL_PREFIX}/group-id`,
  SCHEDULE_ID: `${LABEL_PREFIX}/schedule-id`,
  /** DriverSpec.role: application, runner or sql-engine. */
  ROLE: `${LABEL_PREFIX}/role`,
  /** SQL engines: SPARK_SQL or TRINO. */
  ENGINE: `${LABEL_PREFIX}/sql-engine`,
  MANAGED_BY: 'app.kubernetes.io/managed-by',
  /** Spark's own labels: it puts them on executors; we put them on the driver it runs in. */
  SPARK_APP_SELECTOR: 'spark-app-selector',
  SPARK_ROLE: 'spark-role',
  /** On the service's own pods (API, worker: the Helm chart sets it): driver pods admit them. */
  CLIENT: `${LABEL_PREFIX}/client`,
} as const;
/** The annotation with the driverId as given (the label holds its DNS-safe form). */
export const DRIVER_ID_ANNOTATION = `${LABEL_PREFIX}/driver-id`;
/** DriverSpec.labels keys that become labels, and their label keys. */
const SPEC_LABELS: Record<string, string> = {
  jobId: Labels.JOB_ID,
  groupId: Labels.GROUP_ID,
  scheduleId: Labels.SCHEDULE_ID,
};

/** Base names stay ≤ 40 characters: Spark limits the executor pod name prefix to 47. */
const MAX_BASE = 40;
const DNS_LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export interface K8sNames {
  /** DNS-1035 label derived from the driverId; also the driver-id label value and executor name prefix. */
  base: string;
  pod: string;
  service: string;
  secret: string;
  /** SQL engines: the ClusterIP service clients reach the engine through. */
  engineService: string;
  /** TRINO engines: the ConfigMap holding Trino's etc folder. */
  configMap: string;
  /** The NetworkPolicy admitting only the service's pods and the driver's executors. */
  networkPolicy: string;
  /** spark.app.id of the driver, known before it starts. */
  appId: string;
}

/**
 * Deterministic names of a driver's resources. A driverId that is not already a short DNS label is
 * lowercased, cleaned, cut and given a hash suffix, so distinct driverIds never share names.
 */
export function k8sNames(driverId: string): K8sNames {
  const hash = sha256(driverId);
  let base = driverId
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
  // Service names must start with a letter (DNS-1035).
  if (!/^[a-z]/.test(base)) base = `d-${base}`.replace(/-+$/, '');
  if (base !== driverId || base.length > MAX_BASE)
    base = `${base.slice(0, MAX_BASE - 9).replace(/-+$/, '')}-${hash.slice(0, 8)}`;
  return {
    base,
    pod: `${base}-driver`,
    service: `${base}-driver-svc`,
    secret: `${base}-storage`,
    engineService: `${base}-sql`,
    configMap: `${base}-config`,
    networkPolicy: `${base}-driver-ingress`,
    appId: `spark-${hash.slice(0, 32)}`,
  };
}

/** A value that satisfies the label-value rules (≤ 63, alphanumeric at both ends). */
export function labelValue(v: string): string {
  if (v.length <= 63 && DNS_LABEL_VALUE.test(v)) return v;
  const hash = sha256(v).slice(0, 8);
  const clean = v
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .slice(0, 54)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return clean ? `${clean}-${hash}` : hash;
}

/** The labels a DriverSpec's ids (jobId, groupId, scheduleId) give its objects and executors. */
export function specLabels(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels)
      .filter(([k, v]) => SPEC_LABELS[k] && v)
      .map(([k, v]) => [SPEC_LABELS[k], labelValue(v)]),
  );
}

/** Selects the executor pods Spark started for a driver. */
export const executorSelector = (n: K8sNames) => `${Labels.DRIVER_ID}=${n.base},${Labels.SPARK_ROLE}=executor`;
