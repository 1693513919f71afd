// The list of cluster types: one ClusterTypeDef per ClusterType (domain/states.ts), each from its folder. A
// type missing here, or a def missing a part of the seam, is a compile error. The stored cluster shape is derived
// from the same list.
import { z } from 'zod';
import { CLUSTER_TYPES, ClusterType } from '../../domain/states';
import { CLUSTER_SECRET_FIELDS } from '../../lib/cluster-secrets';
import type { ClusterTypeDef, StoredClusterBase } from './cluster-type';
import { Cluster } from '../../domain/resources';
import { k8sSettings, k8sType, k8sView } from './k8s/cluster-type';
import { localSettings, localType, localView } from './local/cluster-type';
import { yarnSettings, yarnType, yarnView } from './yarn/cluster-type';

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

/** The Cluster resource as the API answers: the fields of every cluster, and every type's own (its `view`). */
export const ClusterView = Cluster.extend({ ...localView, ...k8sView, ...yarnView });
export type ClusterView = z.infer<typeof ClusterView>;

/** Every type's own settings fields, for the create and update bodies. */
export const ALL_TYPE_SETTINGS = Object.assign(
  {},
  ...CLUSTER_TYPES.map((t) => CLUSTER_TYPE_DEFS[t].settings),
) as AllSettingsShape;

/** The types whose settings have `field` (a field of no type: none). */
export const typesWithSetting = (field: string): ClusterType[] =>
  CLUSTER_TYPES.filter((t) => field in CLUSTER_TYPE_DEFS[t].settings);

/** How a form shows a setting: a line of text, a number, `key=value` lines, a list, a write-only secret. */
export const SETTING_KINDS = ['text', 'number', 'map', 'list', 'secret'] as const;
export type SettingKind = (typeof SETTING_KINDS)[number];

/** A setting's kind, read from its schema (what the body takes), so a new type's fields need no console change. */
function settingKind(field: string, schema: z.ZodType): SettingKind {
  if ((CLUSTER_SECRET_FIELDS as readonly string[]).includes(field)) return 'secret';
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  if (inner instanceof z.ZodRecord) return 'map';
  if (inner instanceof z.ZodArray) return 'list';
  if (inner instanceof z.ZodNumber) return 'number';
  return 'text';
}

/** Types and what each can do, as GET /cluster/types answers. */
export const clusterTypeInfo = () =>
  CLUSTER_TYPES.map((type) => {
    const def: ClusterTypeDef = CLUSTER_TYPE_DEFS[type];
    return {
      type,
      title: def.title,
      sparkDeployMode: def.sparkDeployMode,
      url: def.url ?? null,
      settings: Object.keys(def.settings),
      kinds: Object.fromEntries(
        Object.entries(def.settings).map(([field, schema]) => [field, settingKind(field, schema as z.ZodType)]),
      ) as Record<string, SettingKind>,
      ...def.capabilities,
    };
  });
