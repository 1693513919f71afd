// A group's settings changes and the checks its update validators make, as pure functions.
import type { GroupSettingsPatch } from './group';
import { applySharedPatch } from './settings-patch';
import { GroupState } from './states';
import type { Group, SparkSpec } from './types';

type GroupRecord = Omit<Group, 'jobs'>;

/** Spark settings whose change needs new drivers. */
export const RESTART_FIELDS: readonly (keyof GroupSettingsPatch)[] = [
  'jobConfig',
  'pyRequirements',
  'packages',
  'memorySettings',
  'addArtifacts',
];

/**
 * The group and spec after `patch`; `restart` when running drivers no longer match the settings (the
 * workflow then starts a new generation and drains the old one).
 */
export function applyGroupPatch(
  group: GroupRecord,
  spec: SparkSpec,
  patch: GroupSettingsPatch,
): { group: GroupRecord; spec: SparkSpec; restart: boolean } {
  const next = applySharedPatch(group, spec, patch);
  if (patch.autoPause !== undefined) next.record.autoPause = patch.autoPause;
  if (patch.scale !== undefined) next.record.scale = patch.scale;
  return { group: next.record, spec: next.spec, restart: RESTART_FIELDS.some((f) => patch[f] !== undefined) };
}

/** Rejects any change of an archived group (pause, resume, restart, rescale, update). */
export const checkActive = (group: Pick<GroupRecord, 'name' | 'state'>) => {
  if (group.state === GroupState.ARCHIVED) throw new Error(`group '${group.name}' is archived`);
};

/** Rejects a rescale of an archived group or a scale outside 0..maxScale. */
export function checkScale(group: Pick<GroupRecord, 'name' | 'state'>, scale: number, maxScale: number): void {
  checkActive(group);
  if (!Number.isInteger(scale) || scale < 0 || scale > maxScale)
    throw new Error(`scale must be a whole number from 0 to ${maxScale}`);
}

/** Rejects an update of an archived group, or one with a bad scale. */
export function checkGroupPatch(
  group: Pick<GroupRecord, 'name' | 'state'>,
  patch: GroupSettingsPatch,
  maxScale: number,
): void {
  checkActive(group);
  if (patch.scale !== undefined) checkScale(group, patch.scale, maxScale);
}

/** Rejects archiving twice. */
export function checkArchivable(group: Pick<GroupRecord, 'name' | 'state'>): void {
  if (group.state === GroupState.ARCHIVED) throw new Error(`group '${group.name}' is already archived`);
}

/** The group archived at `now`. */
export const archivedGroup = (group: GroupRecord, now: number): GroupRecord => ({
  ...group,
  state: GroupState.ARCHIVED,
  archivedTime: now,
});
