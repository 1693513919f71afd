// The list of cluster types: one ClusterTypeDef per ClusterType (domain/states.ts), each from its folder. A
// type missing here, or a def missing a part of the seam, is a compile error. The stored cluster shape is derived
// from the same list.
import { z } from 'zod';
import { CLUSTER_TYPES, ClusterType } from '../../domain/states';
import type { ClusterTypeDef, StoredClusterBase } from './cluster-type';
import { k8sSettings, k8sType } from './k8s/cluster-type';
import { localSettings, localType } from './local/cluster-type';
import { yarnSettings, yarnType } from './yarn/cluster-type';

export const CLUSTER_TYPE_DEFS = {
  [ClusterType.LOCAL]: localType,
  [ClusterType.K8S]: k8sType,
  [ClusterType.YARN]: yarnType,
} as const satisfies { [T in ClusterType]: ClusterTypeDef };

/** Every type's own settings fields. */
type AllSettingsShape = typeof localSettings & typeof k8sSettings & typeof yarnSettings;
type AllSettings = z.infer<z.ZodObject<AllSettingsShape>>;

/** The one stored cluster shape (the `clusters` collection): common fields, and each type's own, optional. */
export type StoredCluster = StoredClusterBase & Partial<AllSettings>;

/** The definition of a type; an unknown type (a document written by a newer version) throws. */
export function clusterTypeOf(type: string): ClusterTypeDef<AllSettingsShape> {
  // Each def reads only its own fields of the stored cluster, which holds every type's.
  const def = (CLUSTER_TYPE_DEFS as unknown as Record<string, ClusterTypeDef<AllSettingsShape> | undefined>)[type];
  if (!def) throw new Error(`unknown cluster type '${type}'`);
  return def;
}

/** Every type's own settings fields, for the create and update bodies. */
export const ALL_TYPE_SETTINGS = Object.assign(
  {},
  ...CLUSTER_TYPES.map((t) => CLUSTER_TYPE_DEFS[t].settings),
) as AllSettingsShape;

/** The types whose settings have `field` (a field of no type: none). */
export const typesWithSetting = (field: string): ClusterType[] =>
  CLUSTER_TYPES.filter((t) => field in CLUSTER_TYPE_DEFS[t].settings);

/** Types and what each can do, as GET /cluster/types answers. */
export const clusterTypeInfo = () =>
  CLUSTER_TYPES.map((type) => ({
    type,
    sparkDeployMode: CLUSTER_TYPE_DEFS[type].sparkDeployMode,
    settings: Object.keys(CLUSTER_TYPE_DEFS[type].settings),
    ...CLUSTER_TYPE_DEFS[type].capabilities,
  }));
