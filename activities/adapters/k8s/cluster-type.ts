// The `k8s` cluster type: drivers are pods created through the cluster's Kubernetes API server (adapter.ts,
// built by ../cluster-adapters.ts).
import { z } from 'zod';
import { ACCESS_SETTINGS, accessRefusalMessage, refusedAccessSettings } from '../../../domain/access-settings';
import { jvmMemoryBytes } from '../../../domain/delimited';
import { SqlEngine } from '../../../domain/states';
import { maskSecret } from '../../../lib/cluster-secrets';
import { executorsOf, type ClusterTypeDef } from '../cluster-type';

/** A DNS-1123 label, as Kubernetes requires of namespace names. */
export const K8S_NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * A container image reference as Docker's reference grammar has it (distribution/reference): an optional
 * registry host (with a port), slash-separated lower-case path components, then a tag, a digest, or both.
 */
export const IMAGE_REFERENCE = new RegExp(
  '^' +
    // registry host[:port]/ (a component with a dot or a port, or localhost)
    '(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*)(?::[0-9]{1,5})?/)?' +
    // path components
    '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*' +
    // :tag
    '(?::[\\w][\\w.-]{0,127})?' +
    // @algorithm:digest
    '(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$',
);

/** The pattern, or '' (a cleared field: the service's default again). */
const orEmpty = (r: RegExp) => new RegExp(`^$|${r.source}`);

/** host:port of the Temporal frontend as the cluster's drivers reach it (k8s and YARN). */
export const temporalAddressSetting = z
  .string()
  .trim()
  .max(512)
  // '' (a cleared field): the worker's own address again.
  .regex(/^$|^[A-Za-z0-9.-]+:[0-9]{1,5}$/, 'must be host:port, e.g. temporal-frontend.temporal.svc:7233')
  .optional();

/** The cluster's URL must be an http(s) URL (`what`: of what). */
export function checkHttpUrl(c: { url?: string }, ctx: z.RefinementCtx, type: string, what: string): void {
  if (!c.url)
    ctx.addIssue({ code: 'custom', path: ['url'], message: `is required for a ${type} cluster (${what} URL)` });
  else if (!/^https?:\/\/[^\s/]+/.test(c.url))
    ctx.addIssue({ code: 'custom', path: ['url'], message: `'${c.url}' is not an http(s) URL of a ${what}` });
}

export const k8sSettings = {
  caCert: z.string().max(65536).optional(),
  clientCert: z.string().max(65536).optional(),
  clientKey: z.string().max(65536).optional(),
  clientKeyAlgorithm: z.string().max(32).optional(),
  clientKeyPassphrase: z.string().max(4096).optional(),
  username: z.string().max(256).optional(),
  password: z.string().max(4096).optional(),
  /** Bearer token of the API server (a service account's, or EKS, GKE, AKS tokens). */
  token: z.string().max(16384).optional(),
  /**
   * Kinds of Spark settings that grant pods access beyond their own (secrets, volumes, pod templates, service
   * account, credentials, namespace) which drivers on this cluster may use; none by default.
   */
  allowedAccessSettings: z.array(z.enum(ACCESS_SETTINGS)).max(32).optional(),
  /**
   * The namespace its drivers (pods, services, secrets, NetworkPolicies) go to; default ('' or absent)
   * K8S_NAMESPACE. A driver stays in the namespace it was launched in (recorded with it) when this changes.
   */
  namespace: z
    .string()
    .trim()
    .max(63, 'must be at most 63 characters')
    .regex(
      orEmpty(K8S_NAMESPACE_NAME),
      'must be a DNS-1123 label (a Kubernetes namespace name): lower-case letters, digits and -, starting and ending alphanumeric',
    )
    .optional(),
  /** The Spark image of its drivers and executors; default ('' or absent) K8S_SPARK_IMAGE. */
  sparkImage: z
    .string()
    .trim()
    .max(512, 'must be at most 512 characters')
    .regex(
      orEmpty(IMAGE_REFERENCE),
      "must be an image reference such as 'apache/spark:3.5.7-python3' or 'registry:5000/team/spark@sha256:<digest>'",
    )
    .optional(),
  /** host:port of the Temporal frontend as seen from the cluster's pods (runners of group drivers). */
  temporalAddress: temporalAddressSetting,
};

/** Its fields of the Cluster resource (secrets masked). */
export const k8sView = {
  caCert: z.string().optional(),
  clientCert: z.string().optional(),
  clientKey: z.string().optional(),
  clientKeyAlgorithm: z.string().optional(),
  clientKeyPassphrase: z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  /** Bearer token (masked). */
  token: z.string().optional(),
  /** The Temporal frontend as the cluster's drivers reach it. */
  temporalAddress: z.string().optional(),
  /** Namespace of its new drivers, when set (else the service's K8S_NAMESPACE). */
  namespace: z.string().optional(),
  /** Spark image of its drivers and executors, when set (else the service's K8S_SPARK_IMAGE). */
  sparkImage: z.string().optional(),
  /** Kinds of access-granting Spark settings its drivers may use (domain/access-settings.ts). */
  allowedAccessSettings: z.array(z.enum(ACCESS_SETTINGS)).optional(),
};

const jvm = (v: string | undefined) => jvmMemoryBytes(v ?? '1g');

export const k8sType: ClusterTypeDef<typeof k8sSettings> = {
  title: 'driver pods on Kubernetes',
  url: 'Kubernetes API server URL',
  settings: k8sSettings,
  view: k8sView,
  check: (c, ctx) => checkHttpUrl(c, ctx, 'k8s', 'Kubernetes API server'),
  defaults: () => ({}),
  sparkMaster: (c) => `k8s://${c.url}`,
  sparkDeployMode: 'cluster',
  toView: (c) => ({
    caCert: c.caCert,
    clientCert: c.clientCert,
    clientKey: maskSecret(c.clientKey),
    clientKeyAlgorithm: c.clientKeyAlgorithm,
    clientKeyPassphrase: maskSecret(c.clientKeyPassphrase),
    username: c.username,
    password: maskSecret(c.password),
    token: maskSecret(c.token),
    temporalAddress: c.temporalAddress || undefined,
    // '' is a cleared field: the service's default.
    namespace: c.namespace || undefined,
    sparkImage: c.sparkImage || undefined,
    allowedAccessSettings: c.allowedAccessSettings ?? [],
  }),
  refusedConf: (c, conf, field) => {
    const refused = refusedAccessSettings(conf, c.allowedAccessSettings ?? []);
    return refused.length ? accessRefusalMessage(field, c.name, refused) : undefined;
  },
  quotaNeed: (m, instances) => {
    const executors = executorsOf(m);
    return {
      cpu: instances * ((m.driverCores ?? 1) + executors * (m.executorCores ?? 1)),
      memory: instances * (jvm(m.driverMemory) + executors * jvm(m.executorMemory)),
      pods: instances * (1 + executors),
    };
  },
  countsPods: true,
  capabilities: {
    namespaces: true,
    sqlEngines: [SqlEngine.SPARK_SQL, SqlEngine.TRINO],
    connect: true,
    driversOnWorkerHost: false,
    sparkUi: 'pod',
  },
};
