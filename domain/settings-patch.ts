// Applying a settings change (PATCH/update) to a record and the spec it was made from. Groups and
// schedules share most fields; each record keeps the delimited-string form the API returns,
// while the spec keeps the structured form the drivers are launched with.
import { mergeArtifacts } from './artifacts';
import { formatTags } from './delimited';
import type { MemorySettings, SparkSpec } from './types';

/** Fields a group's and a schedule's update share; absent fields stay as they are. */
export interface SharedSettingsPatch {
  description?: string;
  tags?: Record<string, string>;
  jobConfig?: Record<string, string>;
  pyRequirements?: string[];
  packages?: string[];
  memorySettings?: MemorySettings;
  /** Newly uploaded files; each replaces a file of the same name and kind. */
  addArtifacts?: SparkSpec['artifacts'];
}

/** The part of a group or schedule record those fields show in. */
export interface SharedSettingsRecord {
  description: string;
  tags: string;
  jobConfig: Record<string, string>;
  pyRequirements: string;
  packages: string;
  memorySettings: MemorySettings;
}

/** Returns new copies of record and spec with the shared fields of `patch` applied. */
export function applySharedPatch<R extends SharedSettingsRecord>(
  record: R,
  spec: SparkSpec,
  patch: SharedSettingsPatch,
): { record: R; spec: SparkSpec } {
  const r: R = { ...record };
  const s: SparkSpec = { ...spec };
  if (patch.description !== undefined) r.description = patch.description;
  if (patch.tags !== undefined) {
    r.tags = formatTags(patch.tags);
    s.tags = patch.tags;
  }
  if (patch.jobConfig !== undefined) r.jobConfig = s.jobConfig = patch.jobConfig;
  if (patch.pyRequirements !== undefined) {
    r.pyRequirements = patch.pyRequirements.join(';');
    s.pyRequirements = patch.pyRequirements;
  }
  if (patch.packages !== undefined) {
    r.packages = patch.packages.join(',');
    s.packages = patch.packages;
  }
  if (patch.memorySettings !== undefined) r.memorySettings = s.memorySettings = patch.memorySettings;
  if (patch.addArtifacts !== undefined) s.artifacts = mergeArtifacts(s.artifacts, patch.addArtifacts);
  return { record: r, spec: s };
}
