// The k8s cluster adapter. A driver is a pod running spark-submit in client mode, beside a headless
// service (executors reach the driver through its DNS name) and, when the cluster's storage has keys,
// a secret holding them. Every name derives from the driverId, so a retried launch finds what the
// first one created instead of starting a second driver.
//
//   launch ─▶ Pending ──▶ Running ──▶ Succeeded                    → PENDING, RUNNING, SUCCEEDED
//                │            └──────▶ Failed                       → FAILED (reason, exit code)
//                └─ image pull / container config error ─────────▶ FAILED (waiting reason)
//   pod not found → MISSING          API server unreachable, 5xx → UNKNOWN (ask again later)
import { createHash, createPrivateKey } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import {
  ApiException,
  CoreV1Api,
  createConfiguration,
  KubeConfig,
  ResponseContext,
  ServerConfiguration,
  wrapHttpLibrary,
  type RequestContext,
  type V1EnvVar,
  type V1Pod,
  type V1Secret,
  type V1Service,
} from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { memorySparkConf, stripUndefined } from '../../domain/memory';
import type { JobLogEntry } from '../../domain/types';
import type { Config } from '../../lib/config';
import { logger } from '../../lib/log';
import { imageRunnerJars } from './runner-jvm';
import { DriverPhase, type ClusterAdapter, type DriverSpec, type DriverStatus, type LogRange } from './types';

const log = logger('k8s-adapter');

/** One storage of a cluster (its secrets decrypted). */
export interface K8sStorage {
  sparkBucket?: string;
  dataBucket?: string;
  endpoint?: string;
  region?: string;
  accessKey?: string;
  secretKey?: string;
}

/** The fields of a k8s cluster document the adapter needs, with every secret decrypted. */
export interface K8sCluster {
  name: string;
  /** API server URL, https://host:port (http only for a local fake or proxy). */
  url: string;
  /** PEM (or base64 of PEM, as in a kubeconfig) of the CA that signed the API server's certificate. */
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
  /** Decrypts an encrypted (PKCS#8 or traditional PEM) clientKey. */
  clientKeyPassphrase?: string;
  username?: string;
  password?: string;
  /** Key into `storages` of the storage artifacts are read from (default s3). */
  sparkStorage?: string;
  storages?: Record<string, K8sStorage>;
  /** Spark properties every driver gets, `key=value` separated by `;` or new lines; jobConfig wins. */
  defaultApplicationConfig?: string;
}

export interface K8sAdapterOptions {
  cluster: K8sCluster;
  config: Pick<Config, 'K8S_SPARK_IMAGE' | 'K8S_NAMESPACE' | 'ARTIFACT_DIR'>;
  /** runner.py inside the Spark image (the image must contain it). Default DEFAULT_RUNNER_PATH. */
  runnerPath?: string;
  /** A request the API server has not answered within this time fails (status: UNKNOWN). Default 15000. */
  requestTimeoutMs?: number;
}

export const DEFAULT_RUNNER_PATH = '/opt/spark-orchestrator/runner/runner.py';
export const DRIVER_CONTAINER = 'spark-driver';
/** hadoop-aws matching the Hadoop of the apache/spark 3.5 images; added when artifacts come from s3a. */
export const HADOOP_AWS_PACKAGE = 'org.apache.hadoop:hadoop-aws:3.3.4';
const SPARK_SUBMIT = '/opt/spark/bin/spark-submit';
const IN_CLUSTER_MASTER = 'k8s://https://kubernetes.default.svc';
const DRIVER_PORT = 7078;
const BLOCK_MANAGER_PORT = 7079;
const UI_PORT = 4040;
const DELETE_GRACE_SECONDS = 5;

export const LABEL_PREFIX = 'spark-orchestrator.io';
/** Label keys on driver pods, services, secrets (and, through Spark, on executors). */
export const Labels = {
  DRIVER_ID: `${LABEL_PREFIX}/driver-id`,
  JOB_ID: `${LABEL_PREFIX}/job-id`,
  GROUP_ID: `${LABEL_PREFIX}/group-id`,
  SCHEDULE_ID: `${LABEL_PREFIX}/schedule-id`,
  /** DriverSpec.role: application or runner. */
  ROLE: `${LABEL_PREFIX}/role`,
  MANAGED_BY: 'app.kubernetes.io/managed-by',
  /** Spark's own labels: it puts them on executors; we put them on the driver it runs in. */
  SPARK_APP_SELECTOR: 'spark-app-selector',
  SPARK_ROLE: 'spark-role',
} as const;
/** The annotation with the driverId as given (the label holds its DNS-safe form). */
export const DRIVER_ID_ANNOTATION = `${LABEL_PREFIX}/driver-id`;
const SPEC_LABELS: Record<string, string> = { jobId: Labels.JOB_ID, groupId: Labels.GROUP_ID, scheduleId: Labels.SCHEDULE_ID };

const STORAGE_ENV = { ACCESS_KEY: 'AWS_ACCESS_KEY_ID', SECRET_KEY: 'AWS_SECRET_ACCESS_KEY' } as const;
const BIND_ADDRESS_ENV = 'SPARK_DRIVER_BIND_ADDRESS';
/** Waiting reasons after which a pending driver will not start without someone changing something. */
const FATAL_WAITING_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError']);
/** ApplicationFailure types; activities/drivers.ts lists InvalidSpec as permanent. */
const INVALID_SPEC = 'InvalidSpec';
const INVALID_CLUSTER = 'InvalidClusterConfig';

// ───────────────────────────── names and labels ─────────────────────────────

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
  if (base !== driverId || base.length > MAX_BASE) base = `${base.slice(0, MAX_BASE - 9).replace(/-+$/, '')}-${hash.slice(0, 8)}`;
  return { base, pod: `${base}-driver`, service: `${base}-driver-svc`, secret: `${base}-storage`, appId: `spark-${hash.slice(0, 32)}` };
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

const executorSelector = (n: K8sNames) => `${Labels.DRIVER_ID}=${n.base},${Labels.SPARK_ROLE}=executor`;

// ───────────────────────────── manifests ─────────────────────────────

export interface DriverManifests {
  names: K8sNames;
  pod: V1Pod;
  service: V1Service;
  /** Only when the default storage has keys. */
  secret?: V1Secret;
}

/** A permanent problem with what we were asked to launch: retrying will not help. */
const invalidSpec = (message: string) => ApplicationFailure.nonRetryable(message, INVALID_SPEC);

/** Kubernetes expands $(VAR) in args and env values; `$$` is its escape for a literal `$`. */
const noExpansion = (s: string) => s.replaceAll('$', '$$$$');

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const URI = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Parses defaultApplicationConfig leniently: `k=v` (or spark-defaults' `k v`) entries split by `;` or lines. */
export function parseDefaultConf(s: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of (s ?? '').split(/[;\n]/)) {
    const entry = raw.trim();
    if (!entry || entry.startsWith('#')) continue;
    const m = /^([^=\s]+)\s*(?:=|\s)\s*(.*)$/.exec(entry);
    if (m) out[m[1]] = m[2].trim();
  }
  return out;
}

/** JVM size (`2g`, `512m`, `1024` = MiB as Spark reads it) in MiB. */
function jvmMiB(s: string, field: string): number {
  const m = /^\s*(\d+)\s*([kmgtp]?)b?\s*$/i.exec(s);
  if (!m) throw invalidSpec(`invalid ${field} '${s}': not a JVM memory size such as 512m or 2g`);
  const n = Number(m[1]);
  const unit = m[2].toLowerCase();
  const factor: Record<string, number> = { '': 1, k: 1 / 1024, m: 1, g: 1024, t: 1024 ** 2, p: 1024 ** 3 };
  return n * factor[unit];
}

/** Driver container resources as Spark sizes a driver pod: memory + max(10%, 384Mi) overhead. */
function driverResources(conf: Record<string, string>) {
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

/**
 * The pod, service and secret of a driver. Pure (no API calls), so tests and operators can inspect
 * exactly what launch sends. Throws a non-retryable InvalidSpec failure for specs that cannot run.
 */
export function buildDriverManifests(spec: DriverSpec, opts: Pick<K8sAdapterOptions, 'cluster' | 'config' | 'runnerPath'>): DriverManifests {
  const { cluster, config } = opts;
  const n = k8sNames(spec.driverId);
  const namespace = config.K8S_NAMESPACE;
  const s = spec.spark;
  const storageKey = cluster.sparkStorage ?? 's3';
  const storage = cluster.storages?.[storageKey];
  const artifactRoot = path.resolve(config.ARTIFACT_DIR);

  let usesS3a = false;
  const artifactUri = (p: string): string => {
    if (URI.test(p)) {
      if (/^s3a:/i.test(p)) usesS3a = true;
      return p;
    }
    const rel = path.relative(artifactRoot, path.resolve(artifactRoot, p));
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) throw invalidSpec(`artifact '${p}' is not inside the artifact store ${artifactRoot}`);
    if (!storage?.sparkBucket) {
      throw invalidSpec(`cluster '${cluster.name}' has no storage '${storageKey}' with a sparkBucket: k8s drivers read artifacts such as '${path.basename(p)}' from it`);
    }
    usesS3a = true;
    return `s3a://${storage.sparkBucket}/artifacts/${rel.split(path.sep).join('/')}`;
  };

  const jars = s.artifacts.jars.map(artifactUri);
  const pyFiles = s.artifacts.pyFiles.map(artifactUri);
  const files = s.artifacts.files.map(artifactUri);

  // The primary resource: what spark-submit runs.
  let mainClass: string | undefined;
  let primary: string;
  let extraJars = jars;
  let extraPyFiles = pyFiles;
  if (spec.role === 'runner') {
    primary = opts.runnerPath ?? DEFAULT_RUNNER_PATH;
    // SCALA groups: the job interface and the runner's JVM classes, which the image holds beside runner.py.
    if (s.language === 'SCALA') extraJars = [...imageRunnerJars(), ...jars];
  } else if (s.language === 'SCALA') {
    if (jars.length === 0) throw invalidSpec(`job '${s.name}' has no main jar: a SCALA application needs at least one jar`);
    primary = jars[0];
    extraJars = jars.slice(1);
    mainClass = s.jobClass || undefined;
  } else {
    const names = s.artifacts.pyFiles.map((p) => path.basename(p));
    let i = s.jobClass ? names.findIndex((b) => b === s.jobClass || b.replace(/\.py$/, '') === s.jobClass) : -1;
    if (i < 0 && !s.jobClass && pyFiles.length === 1) i = 0;
    if (i < 0) {
      throw invalidSpec(`job '${s.name}' has no main python file: no pyFile is named '${s.jobClass ?? ''}' or '${s.jobClass ?? ''}.py' (pyFiles: ${names.join(', ') || 'none'})`);
    }
    primary = pyFiles[i];
    extraPyFiles = pyFiles.filter((_, j) => j !== i);
  }

  const packages = [...s.packages];
  if (usesS3a && !packages.some((p) => p.includes(':hadoop-aws:'))) packages.push(HADOOP_AWS_PACKAGE);

  const hasKeys = !!(storage?.accessKey || storage?.secretKey);
  const storageConf: Record<string, string> = {};
  if (storage?.endpoint) {
    storageConf['spark.hadoop.fs.s3a.endpoint'] = storage.endpoint;
    // S3-compatible stores behind a custom endpoint (MinIO, Ceph) rarely serve virtual-host buckets.
    storageConf['spark.hadoop.fs.s3a.path.style.access'] = 'true';
  }
  if (storage?.region) storageConf['spark.hadoop.fs.s3a.endpoint.region'] = storage.region;

  const driverLabel = `spark.kubernetes.executor.label.${Labels.DRIVER_ID}`;
  const specLabels = Object.fromEntries(
    Object.entries(spec.labels)
      .filter(([k, v]) => SPEC_LABELS[k] && v)
      .map(([k, v]) => [SPEC_LABELS[k], labelValue(v)]),
  );
  // Precedence: our defaults < the cluster's defaults < memory settings < the job's jobConfig < what
  // the pod, service and secret below depend on (changing those would break the driver).
  const conf: Record<string, string> = {
    'spark.kubernetes.container.image': config.K8S_SPARK_IMAGE,
    // The image's home may not be writable; --packages resolves into the ivy directory.
    'spark.jars.ivy': '/tmp/.ivy2',
    ...storageConf,
    ...parseDefaultConf(cluster.defaultApplicationConfig),
    ...memorySparkConf(s.memorySettings),
    ...s.jobConfig,
    'spark.app.id': n.appId,
    'spark.driver.host': `${n.service}.${namespace}.svc`,
    'spark.driver.bindAddress': `$(${BIND_ADDRESS_ENV})`,
    'spark.driver.port': String(DRIVER_PORT),
    'spark.driver.blockManager.port': String(BLOCK_MANAGER_PORT),
    'spark.kubernetes.namespace': namespace,
    'spark.kubernetes.driver.pod.name': n.pod,
    'spark.kubernetes.executor.podNamePrefix': n.base,
    [driverLabel]: n.base,
    ...Object.fromEntries(Object.entries(specLabels).map(([k, v]) => [`spark.kubernetes.executor.label.${k}`, v])),
    ...(hasKeys
      ? {
          [`spark.kubernetes.executor.secretKeyRef.${STORAGE_ENV.ACCESS_KEY}`]: `${n.secret}:${STORAGE_ENV.ACCESS_KEY}`,
          [`spark.kubernetes.executor.secretKeyRef.${STORAGE_ENV.SECRET_KEY}`]: `${n.secret}:${STORAGE_ENV.SECRET_KEY}`,
        }
      : {}),
  };

  const args: string[] = ['--master', IN_CLUSTER_MASTER, '--deploy-mode', 'client', '--name', noExpansion(s.name)];
  if (mainClass) args.push('--class', noExpansion(mainClass));
  for (const [k, v] of Object.entries(conf)) {
    // Our bind address (set last above, so always ours) is the one value Kubernetes must expand: the pod IP.
    args.push('--conf', k === 'spark.driver.bindAddress' ? `${k}=${v}` : noExpansion(`${k}=${v}`));
  }
  if (packages.length) args.push('--packages', noExpansion(packages.join(',')));
  if (extraJars.length) args.push('--jars', noExpansion(extraJars.join(',')));
  if (extraPyFiles.length) args.push('--py-files', noExpansion(extraPyFiles.join(',')));
  if (files.length) args.push('--files', noExpansion(files.join(',')));
  args.push(noExpansion(primary), ...s.args.map(noExpansion));

  const reserved = new Set<string>([BIND_ADDRESS_ENV, ...(hasKeys ? Object.values(STORAGE_ENV) : [])]);
  for (const name of Object.keys(spec.env)) {
    if (!ENV_NAME.test(name)) throw invalidSpec(`invalid environment variable name '${name}'`);
  }
  const env: V1EnvVar[] = [
    { name: BIND_ADDRESS_ENV, valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    ...Object.entries(spec.env)
      .filter(([k]) => !reserved.has(k))
      .map(([name, value]) => ({ name, value: noExpansion(value) })),
    ...(hasKeys
      ? Object.values(STORAGE_ENV).map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: n.secret, key } } }))
      : []),
  ];

  const labels: Record<string, string> = {
    [Labels.MANAGED_BY]: 'spark-orchestrator',
    [Labels.DRIVER_ID]: n.base,
    [Labels.ROLE]: spec.role,
    ...specLabels,
  };
  const annotations = { [DRIVER_ID_ANNOTATION]: spec.driverId };
  const serviceAccount = s.jobConfig['spark.kubernetes.authenticate.driver.serviceAccountName'];

  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: n.pod,
      namespace,
      labels: { ...labels, [Labels.SPARK_ROLE]: 'driver', [Labels.SPARK_APP_SELECTOR]: labelValue(conf['spark.app.id']) },
      annotations,
    },
    spec: {
      restartPolicy: 'Never',
      ...(serviceAccount ? { serviceAccountName: serviceAccount } : {}),
      containers: [
        {
          name: DRIVER_CONTAINER,
          image: config.K8S_SPARK_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: [SPARK_SUBMIT],
          args,
          env,
          ports: [
            { name: 'driver-rpc', containerPort: DRIVER_PORT },
            { name: 'blockmanager', containerPort: BLOCK_MANAGER_PORT },
            { name: 'spark-ui', containerPort: UI_PORT },
          ],
          resources: driverResources(conf),
        },
      ],
    },
  };
  const service: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: n.service, namespace, labels, annotations },
    spec: {
      clusterIP: 'None',
      // Executors resolve the driver as soon as it listens, before any readiness.
      publishNotReadyAddresses: true,
      selector: { [Labels.DRIVER_ID]: n.base, [Labels.SPARK_ROLE]: 'driver' },
      ports: [
        { name: 'driver-rpc', port: DRIVER_PORT, targetPort: DRIVER_PORT },
        { name: 'blockmanager', port: BLOCK_MANAGER_PORT, targetPort: BLOCK_MANAGER_PORT },
        { name: 'spark-ui', port: UI_PORT, targetPort: UI_PORT },
      ],
    },
  };
  const secret: V1Secret | undefined = hasKeys
    ? {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: n.secret, namespace, labels, annotations },
        type: 'Opaque',
        stringData: { [STORAGE_ENV.ACCESS_KEY]: storage?.accessKey ?? '', [STORAGE_ENV.SECRET_KEY]: storage?.secretKey ?? '' },
      }
    : undefined;
  return { names: n, pod, service, secret };
}

// kubernetes-models is a devDependency: a production install without it sends manifests unvalidated
// (the API server still validates them) instead of failing to load the worker.
type Validatable = new (data: never) => { validate(): void };
let modelsLoad: Promise<{ Pod: Validatable; Service: Validatable; Secret: Validatable } | undefined> | undefined;
function loadModels() {
  modelsLoad ??= Promise.all([import('kubernetes-models/v1/Pod'), import('kubernetes-models/v1/Service'), import('kubernetes-models/v1/Secret')]).then(
    ([p, s, sec]) => ({ Pod: p.Pod as Validatable, Service: s.Service as Validatable, Secret: sec.Secret as Validatable }),
    (e: unknown) => {
      log.warn('kubernetes-models is not installed: manifests go to the API server unvalidated', { error: String(e) });
      return undefined;
    },
  );
  return modelsLoad;
}

/** Checks the manifests against the official schema before anything is sent. */
export async function validateManifests(m: DriverManifests): Promise<void> {
  const models = await loadModels();
  if (!models) return;
  const check = (Model: Validatable, obj: object, what: string) => {
    try {
      new Model(JSON.parse(JSON.stringify(obj)) as never).validate();
    } catch (e) {
      throw invalidSpec(`invalid ${what} manifest: ${(e as Error).message}`);
    }
  };
  check(models.Pod, m.pod, `pod ${m.names.pod}`);
  check(models.Service, m.service, `service ${m.names.service}`);
  if (m.secret) check(models.Secret, m.secret, `secret ${m.names.secret}`);
}

// ───────────────────────────── status ─────────────────────────────

const toMs = (d: Date | string | undefined): number | undefined => {
  if (d === undefined) return undefined;
  const t = d instanceof Date ? d.getTime() : Date.parse(d);
  return Number.isNaN(t) ? undefined : t;
};
const words = (...parts: (string | undefined)[]) => parts.filter(Boolean).join(': ');

/** The driver's status as the pod shows it. */
export function podStatus(pod: V1Pod): DriverStatus {
  const statuses = pod.status?.containerStatuses ?? [];
  const cs = statuses.find((c) => c.name === DRIVER_CONTAINER) ?? statuses[0];
  const { running, terminated, waiting } = cs?.state ?? {};
  const base = stripUndefined({
    appId: pod.metadata?.labels?.[Labels.SPARK_APP_SELECTOR] || undefined,
    startTime: toMs(running?.startedAt ?? terminated?.startedAt),
    endTime: toMs(terminated?.finishedAt),
  });
  switch (pod.status?.phase) {
    case 'Pending':
      if (waiting?.reason && FATAL_WAITING_REASONS.has(waiting.reason)) {
        return { ...base, phase: DriverPhase.FAILED, message: words(waiting.reason, waiting.message) };
      }
      return { ...base, phase: DriverPhase.PENDING };
    case 'Running':
      return { ...base, phase: DriverPhase.RUNNING };
    case 'Succeeded':
      return { ...base, phase: DriverPhase.SUCCEEDED, exitCode: terminated?.exitCode ?? 0 };
    case 'Failed': {
      const why = terminated
        ? `${words(terminated.reason ?? 'Error', terminated.message?.trim())} (exit code ${terminated.exitCode})`
        : words(pod.status?.reason, pod.status?.message) || 'driver pod failed';
      return stripUndefined({ ...base, phase: DriverPhase.FAILED, message: why, exitCode: terminated?.exitCode });
    }
    default:
      return { ...base, phase: DriverPhase.UNKNOWN, message: `driver pod ${pod.metadata?.name} is in phase ${pod.status?.phase ?? '(none)'}` };
  }
}

// ───────────────────────────── connection ─────────────────────────────

const pemToBase64 = (s: string) => (s.includes('-----BEGIN') ? Buffer.from(s).toString('base64') : s.replace(/\s+/g, ''));
const pemText = (s: string) => (s.includes('-----BEGIN') ? s : Buffer.from(s, 'base64').toString('utf8'));

/** The kubeconfig of a cluster document: its server, CA, client certificate and key, or basic auth. */
export function buildKubeConfig(cluster: K8sCluster, namespace = 'default'): KubeConfig {
  const server = cluster.url.trim().replace(/\/+$/, '');
  let keyData: string | undefined;
  if (cluster.clientKey) {
    // KubeConfig has no passphrase field: decrypt here and hand it the plain key.
    const key = pemText(cluster.clientKey);
    try {
      keyData = cluster.clientKeyPassphrase
        ? Buffer.from(createPrivateKey({ key, format: 'pem', passphrase: cluster.clientKeyPassphrase }).export({ format: 'pem', type: 'pkcs8' }) as string).toString('base64')
        : pemToBase64(key);
    } catch {
      throw new Error(`cluster '${cluster.name}': invalid clientKey, or clientKeyPassphrase does not decrypt it`);
    }
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: cluster.name,
        server,
        caData: cluster.caCert ? pemToBase64(cluster.caCert) : undefined,
        // Plain http (a local fake or kubectl proxy) has no TLS to verify.
        skipTLSVerify: !cluster.caCert && server.startsWith('http:'),
      },
    ],
    users: [
      {
        name: `${cluster.name}-user`,
        certData: cluster.clientCert ? pemToBase64(cluster.clientCert) : undefined,
        keyData,
        username: cluster.username || undefined,
        password: cluster.username ? (cluster.password ?? '') : undefined,
      },
    ],
    contexts: [{ name: cluster.name, cluster: cluster.name, user: `${cluster.name}-user`, namespace }],
    currentContext: cluster.name,
  });
  return kc;
}

interface Transport {
  agent: http.Agent;
  headers: Record<string, string>;
  secure: boolean;
}

/**
 * One keep-alive agent per adapter, built from the kubeconfig once. The client library would make
 * a new agent (a new connection) per request and never time out; a status poll must not hang.
 */
async function transportFor(kc: KubeConfig, timeoutMs: number): Promise<Transport> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const secure = kc.getCurrentCluster()!.server.startsWith('https:');
  const agentOpts: https.AgentOptions = {
    keepAlive: true,
    maxSockets: 100,
    timeout: timeoutMs,
    ca: opts.ca,
    cert: opts.cert,
    key: opts.key,
    rejectUnauthorized: opts.rejectUnauthorized,
    servername: opts.servername,
  };
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return { agent: secure ? new https.Agent(agentOpts) : new http.Agent(agentOpts), headers, secure };
}

async function send(t: Transport, req: RequestContext, timeoutMs: number): Promise<ResponseContext> {
  try {
    return await sendOnce(t, req, timeoutMs);
  } catch (e) {
    // A kept-alive connection the server closed meanwhile fails at once; a fresh one may not. Every
    // request the adapter makes is safe to repeat (creates by fixed name, reads, deletes).
    if ((e as { reusedSocket?: boolean }).reusedSocket && (e as NodeJS.ErrnoException).code === 'ECONNRESET') return sendOnce(t, req, timeoutMs);
    throw e;
  }
}

function sendOnce(t: Transport, req: RequestContext, timeoutMs: number): Promise<ResponseContext> {
  return new Promise((resolve, reject) => {
    const body = req.getBody();
    if (body !== undefined && typeof body !== 'string') {
      reject(new Error('unsupported request body'));
      return;
    }
    const headers: Record<string, string | number> = { ...req.getHeaders(), ...t.headers };
    if (body !== undefined) headers['Content-Length'] = Buffer.byteLength(body);
    const r = (t.secure ? https : http).request(req.getUrl(), { method: req.getHttpMethod(), headers, agent: t.agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve(new ResponseContext(res.statusCode ?? 0, h, { text: async () => buf.toString('utf8'), binary: async () => buf }));
      });
    });
    r.on('timeout', () => r.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    r.on('error', (e) => reject(Object.assign(e, { reusedSocket: r.reusedSocket })));
    r.end(body);
  });
}

// ───────────────────────────── errors ─────────────────────────────

/** A failed API call, described without request details or credentials. Retryable. */
export class K8sApiError extends Error {
  override readonly name = 'K8sApiError';
  constructor(
    message: string,
    /** HTTP status; undefined when the server did not answer. */
    readonly code?: number,
    /** Kubernetes Status reason (NotFound, AlreadyExists, Invalid, Forbidden, ...). */
    readonly reason?: string,
  ) {
    super(message);
  }
}

const codeOf = (e: unknown) => (e instanceof ApiException ? (e.code as number) : undefined);
const isNotFound = (e: unknown) => codeOf(e) === 404;

function statusBody(e: ApiException<unknown>): { reason?: string; message?: string } {
  const b = e.body;
  const text = typeof b === 'string' ? b : Buffer.isBuffer(b) ? b.toString('utf8') : b && typeof b === 'object' ? JSON.stringify(b) : '';
  try {
    const s = JSON.parse(text) as { kind?: string; reason?: string; message?: string };
    return s && typeof s === 'object' ? { reason: s.reason, message: s.message } : {};
  } catch {
    return { message: text.slice(0, 300) || undefined };
  }
}

// ───────────────────────────── the adapter ─────────────────────────────

export function createK8sAdapter(opts: K8sAdapterOptions): ClusterAdapter {
  const { cluster, config } = opts;
  const namespace = config.K8S_NAMESPACE;
  const timeoutMs = opts.requestTimeoutMs ?? 15_000;
  let host = cluster.url;
  try {
    host = new URL(cluster.url).host;
  } catch {
    // keep the configured string; the kubeconfig below reports it
  }
  const secrets = [cluster.password, cluster.clientKey, cluster.clientKeyPassphrase, ...Object.values(cluster.storages ?? {}).flatMap((s) => [s.accessKey, s.secretKey])].filter(
    (s): s is string => typeof s === 'string' && s.length >= 4,
  );
  /** Messages leave the adapter without any credential in them, whatever produced them. */
  const scrub = (msg: string) => secrets.reduce((m, s) => m.split(s).join('***'), msg);

  let api: CoreV1Api | undefined;
  let setupError: Error | undefined;
  try {
    const kc = buildKubeConfig(cluster, namespace);
    const target = kc.getCurrentCluster()!;
    if (target.server.startsWith('http:') && !target.skipTLSVerify) {
      throw new Error(`cluster '${cluster.name}': a caCert cannot verify the plain http:// API server URL ${target.server}; use https://`);
    }
    const transport = transportFor(kc, timeoutMs);
    // Reported on the first call that needs it, not as an unhandled rejection.
    transport.catch(() => undefined);
    const httpApi = wrapHttpLibrary({ send: async (req) => send(await transport, req, timeoutMs) });
    api = new CoreV1Api(createConfiguration({ baseServer: new ServerConfiguration(target.server, {}), httpApi, authMethods: {} }));
  } catch (e) {
    setupError = new Error(scrub((e as Error).message));
  }
  const client = (): CoreV1Api => {
    if (!api) throw ApplicationFailure.nonRetryable(setupError?.message ?? 'no client', INVALID_CLUSTER);
    return api;
  };

  const describe = (e: unknown, what: string): K8sApiError => {
    if (e instanceof ApiException) {
      const s = statusBody(e);
      const reason = s.reason ?? (e.code === 401 ? 'Unauthorized' : undefined);
      return new K8sApiError(scrub(`Kubernetes API (${host}) ${what}: HTTP ${e.code}${reason ? ` ${reason}` : ''}${s.message ? `: ${s.message}` : ''}`), e.code, reason);
    }
    if (e instanceof ApplicationFailure) return new K8sApiError(scrub(e.message));
    const err = e as NodeJS.ErrnoException;
    const detail = err?.code && !String(err.message).includes(err.code) ? `${err.code} ${err.message}` : String(err?.message ?? e);
    return new K8sApiError(scrub(`Kubernetes API server ${host} unreachable while trying to ${what}: ${detail}`));
  };
  /** Errors of a create or delete: a refused manifest is permanent, everything else is retried. */
  const fail = (e: unknown, what: string): Error => {
    if (e instanceof ApplicationFailure) return e;
    const d = describe(e, what);
    return d.code === 422 || d.code === 400 ? ApplicationFailure.nonRetryable(d.message, INVALID_SPEC) : d;
  };

  /** Creates an object unless it exists (409): the deterministic name makes a retry a no-op. */
  const ensure = async (what: string, create: () => Promise<unknown>) => {
    try {
      await create();
    } catch (e) {
      if (codeOf(e) !== 409) throw fail(e, what);
    }
  };

  const ignoreMissing = async (what: string, del: () => Promise<unknown>) => {
    try {
      await del();
    } catch (e) {
      if (!isNotFound(e)) throw fail(e, what);
    }
  };

  const readLogLines = async (pod: V1Pod, container: string | undefined): Promise<string[]> => {
    const name = pod.metadata!.name!;
    try {
      const text = await client().readNamespacedPodLog({ name, namespace, container });
      if (!text) return [];
      return String(text).replace(/\n$/, '').split('\n');
    } catch (e) {
      // 400: the container has not started yet (no log); 404: the pod went away meanwhile.
      const code = codeOf(e);
      if (code === 400 || code === 404) return [];
      throw describe(e, `read the log of pod ${name}`);
    }
  };

  const logEntry = async (pod: V1Pod, role: 'driver' | 'executor', container: string | undefined, range: LogRange): Promise<JobLogEntry> => {
    const name = pod.metadata!.name!;
    const from = Math.max(0, range.from);
    const lines = range.size > 0 ? (await readLogLines(pod, container)).slice(from, from + range.size) : [];
    return { name, type: 'pod', role, state: pod.status?.phase ?? 'Unknown', from, logSize: lines.length, fileName: `${name}.log`, log: lines };
  };

  return {
    async launch(spec: DriverSpec): Promise<DriverStatus> {
      const m = buildDriverManifests(spec, opts);
      await validateManifests(m);
      const api = client();
      const n = m.names;
      await Promise.all([
        m.secret ? ensure(`create secret ${n.secret}`, () => api.createNamespacedSecret({ namespace, body: m.secret! })) : undefined,
        ensure(`create service ${n.service}`, () => api.createNamespacedService({ namespace, body: m.service })),
      ]);
      let pod: V1Pod;
      try {
        pod = await api.createNamespacedPod({ namespace, body: m.pod });
        log.debug('driver pod created', { driverId: spec.driverId, pod: n.pod, namespace });
      } catch (e) {
        if (codeOf(e) !== 409) throw fail(e, `create pod ${n.pod}`);
        try {
          pod = await api.readNamespacedPod({ name: n.pod, namespace });
        } catch (e2) {
          throw fail(e2, `read pod ${n.pod}`);
        }
      }
      return podStatus(pod);
    },

    async status(driverId: string): Promise<DriverStatus> {
      const n = k8sNames(driverId);
      try {
        return podStatus(await client().readNamespacedPod({ name: n.pod, namespace }));
      } catch (e) {
        if (isNotFound(e)) return { phase: DriverPhase.MISSING };
        return { phase: DriverPhase.UNKNOWN, message: describe(e, `read pod ${n.pod}`).message };
      }
    },

    async logs(driverId: string, range: LogRange): Promise<JobLogEntry[]> {
      const n = k8sNames(driverId);
      const api = client();
      let driver: V1Pod;
      try {
        driver = await api.readNamespacedPod({ name: n.pod, namespace });
      } catch (e) {
        if (isNotFound(e)) return [];
        throw describe(e, `read pod ${n.pod}`);
      }
      let executors: V1Pod[];
      try {
        executors = (await api.listNamespacedPod({ namespace, labelSelector: executorSelector(n) })).items;
      } catch (e) {
        throw describe(e, `list the executors of ${n.pod}`);
      }
      executors.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
      return Promise.all([
        logEntry(driver, 'driver', DRIVER_CONTAINER, range),
        ...executors.map((p) => logEntry(p, 'executor', p.spec?.containers?.[0]?.name, range)),
      ]);
    },

    async remove(driverId: string): Promise<void> {
      const n = k8sNames(driverId);
      const api = client();
      const results = await Promise.allSettled([
        ignoreMissing(`delete pod ${n.pod}`, () =>
          api.deleteNamespacedPod({ name: n.pod, namespace, gracePeriodSeconds: DELETE_GRACE_SECONDS, propagationPolicy: 'Background' }),
        ),
        // Spark deletes its executors when the driver stops; a killed driver leaves them to us.
        ignoreMissing(`delete the executors of ${n.pod}`, () =>
          api.deleteCollectionNamespacedPod({ namespace, labelSelector: executorSelector(n), gracePeriodSeconds: DELETE_GRACE_SECONDS }),
        ),
        ignoreMissing(`delete service ${n.service}`, () => api.deleteNamespacedService({ name: n.service, namespace })),
        ignoreMissing(`delete secret ${n.secret}`, () => api.deleteNamespacedSecret({ name: n.secret, namespace })),
      ]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}
