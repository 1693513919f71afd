// Request bodies of the cluster endpoints (4.21, 4.24); the response shape is domain/resources.ts's Cluster.
import { z } from 'zod';
import { ACCESS_SETTINGS } from '../../domain/access-settings';
import { Storage } from '../../domain/resources';
import { CLUSTER_TYPES, ClusterType } from '../../domain/states';
import { MemorySettingsCreation, name, quantity } from '../schemas';

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

const LimitRangeItem = z
  .object({
    defaultLimit: quantity('defaultLimit'),
    defaultRequest: quantity('defaultRequest'),
    minRequest: quantity('minRequest'),
    maxLimit: quantity('maxLimit'),
    maxLimitRequestRatio: quantity('maxLimitRequestRatio'),
  })
  .partial()
  .strict();

const ClusterFields = {
  name,
  description: z.string().max(4096).optional(),
  storages: z
    .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'storage keys are 1-64 letters, digits, _ . -'), Storage)
    .optional(),
  sparkStorage: z.string().trim().min(1).max(64).optional(),
  metastoreName: z.string().trim().max(128).optional(),
  memorySettings: MemorySettingsCreation.optional(),
  defaultApplicationConfig: z.string().max(16384).optional(),
  type: z.enum(CLUSTER_TYPES).default(ClusterType.K8S),
  /** Local clusters (Ilum's localCluster): N of `local[N]` for their drivers; default LOCAL_SPARK_THREADS. */
  threads: z.number().int().min(1).max(1024).optional(),
  url: z.string().trim().max(2048).optional(),
  caCert: z.string().max(65536).optional(),
  clientCert: z.string().max(65536).optional(),
  clientKey: z.string().max(65536).optional(),
  clientKeyAlgorithm: z.string().max(32).optional(),
  clientKeyPassphrase: z.string().max(4096).optional(),
  username: z.string().max(256).optional(),
  password: z.string().max(4096).optional(),
  /** k8s: bearer token of the API server (a service account's, or EKS, GKE, AKS tokens). */
  token: z.string().max(16384).optional(),
  /**
   * k8s: kinds of Spark settings that grant pods access beyond their own (secrets, volumes, pod templates, service
   * account, credentials, namespace) which drivers on this cluster may use; none by default.
   */
  allowedAccessSettings: z.array(z.enum(ACCESS_SETTINGS)).max(32).optional(),
  /**
   * k8s: the namespace its drivers (pods, services, secrets, NetworkPolicies) go to; default ('' or absent)
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
  /** k8s: the Spark image of its drivers and executors; default ('' or absent) K8S_SPARK_IMAGE. */
  sparkImage: z
    .string()
    .trim()
    .max(512, 'must be at most 512 characters')
    .regex(
      orEmpty(IMAGE_REFERENCE),
      "must be an image reference such as 'apache/spark:3.5.7-python3' or 'registry:5000/team/spark@sha256:<digest>'",
    )
    .optional(),
  /** k8s: host:port of the Temporal frontend as seen from the cluster's pods (runners of group drivers). */
  temporalAddress: z
    .string()
    .trim()
    .max(512)
    .regex(/^[A-Za-z0-9.-]+:[0-9]{1,5}$/, 'must be host:port, e.g. temporal-frontend.temporal.svc:7233')
    .optional(),
  resourceQuota: z
    .object({
      limitsPod: z
        .string()
        .trim()
        .regex(/^[0-9]+$/, 'must be a whole number of pods'),
      limitsCpu: quantity('limitsCpu'),
      limitsMemory: quantity('limitsMemory'),
      requestsCpu: quantity('requestsCpu'),
      requestsMemory: quantity('requestsMemory'),
    })
    .partial()
    .strict()
    .optional(),
  limitRange: z
    .object({ cpuLimitRange: LimitRangeItem.optional(), memoryLimitRange: LimitRangeItem.optional() })
    .strict()
    .optional(),
};

/** A k8s cluster needs the URL of its Kubernetes API server. */
export const checkUrl = (c: { type?: string; url?: string; threads?: number }, ctx: z.RefinementCtx) => {
  if (c.type === ClusterType.K8S && c.threads !== undefined)
    ctx.addIssue({ code: 'custom', path: ['threads'], message: 'is a setting of local clusters only' });
  if (c.type === ClusterType.K8S) {
    if (!c.url)
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'is required for a k8s cluster (the API server URL)' });
    else if (!/^https?:\/\/[^\s/]+/.test(c.url))
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: `'${c.url}' is not an http(s) URL of a Kubernetes API server`,
      });
  }
};

/** Local drivers are host processes: no Kubernetes setting applies to them. */
export const checkAccessField = (
  c: { type?: string; allowedAccessSettings?: unknown[]; namespace?: string; sparkImage?: string },
  ctx: z.RefinementCtx,
) => {
  if (c.type !== ClusterType.LOCAL) return;
  if (c.allowedAccessSettings?.length)
    ctx.addIssue({ code: 'custom', path: ['allowedAccessSettings'], message: 'is a setting of k8s clusters only' });
  for (const field of ['namespace', 'sparkImage'] as const)
    if (c[field]) ctx.addIssue({ code: 'custom', path: [field], message: 'is a setting of k8s clusters only' });
};

export const ClusterCreate = z.object(ClusterFields).strict().superRefine(checkUrl).superRefine(checkAccessField);
export type ClusterCreate = z.infer<typeof ClusterCreate>;

export const ClusterUpdate = z
  .object({ ...ClusterFields, name: name.optional(), type: z.enum(CLUSTER_TYPES).optional() })
  .strict();
export type ClusterUpdate = z.infer<typeof ClusterUpdate>;
