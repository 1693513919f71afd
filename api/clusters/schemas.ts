// Request bodies of the cluster endpoints (4.21, 4.24); the response shape is domain/resources.ts's Cluster.
// The fields of every type are here, each type's own settings from its folder
// (activities/adapters/<type>/cluster-type.ts, listed by cluster-types.ts).
import { z } from 'zod';
import {
  ALL_TYPE_SETTINGS,
  clusterTypeOf,
  typesWithSetting,
  type StoredCluster,
} from '../../activities/adapters/cluster-types';
import { Storage } from '../../domain/resources';
import { CLUSTER_TYPES, ClusterType } from '../../domain/states';
import { MemorySettingsCreation, name, quantity } from '../schemas';

export { IMAGE_REFERENCE, K8S_NAMESPACE_NAME } from '../../activities/adapters/k8s/cluster-type';

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
  /** Where the cluster is reached (its type says what: API server, ResourceManager); local clusters: `local`. */
  url: z.string().trim().max(2048).optional(),
  ...ALL_TYPE_SETTINGS,
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

/** A value that counts as given ('' and [] are cleared fields). */
const given = (v: unknown) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0);

/**
 * The rules of the cluster's type, and no setting of another type: e.g. `threads` on a k8s cluster answers
 * "is a setting of local clusters only".
 */
export const checkClusterType = (c: Record<string, unknown> & { type?: string }, ctx: z.RefinementCtx) => {
  const type = (c.type ?? ClusterType.K8S) as ClusterType;
  const def = clusterTypeOf(type);
  for (const field of Object.keys(ALL_TYPE_SETTINGS)) {
    if (field in def.settings || !given(c[field])) continue;
    ctx.addIssue({
      code: 'custom',
      path: [field],
      message: `is a setting of ${typesWithSetting(field).join(' and ')} clusters only`,
    });
  }
  def.check(c as Partial<StoredCluster>, ctx);
};

export const ClusterCreate = z.object(ClusterFields).strict().superRefine(checkClusterType);
export type ClusterCreate = z.infer<typeof ClusterCreate>;

export const ClusterUpdate = z
  .object({ ...ClusterFields, name: name.optional(), type: z.enum(CLUSTER_TYPES).optional() })
  .strict();
export type ClusterUpdate = z.infer<typeof ClusterUpdate>;
