import { describe, expect, it } from 'vitest';
import {
  applyGroupPatch,
  archivedGroup,
  checkArchivable,
  checkGroupPatch,
  checkScale,
} from '../../domain/group-settings';
import {
  applySchedulePatch,
  checkDisable,
  checkPause,
  checkResume,
  disableDueIn,
  END_GRACE_MS,
  temporalScheduleDef,
  withScheduleState,
} from '../../domain/schedule-settings';
import { applySharedPatch } from '../../domain/settings-patch';
import { group, schedule, spec } from './domain-fixtures';

describe('shared settings patch', () => {
  it('writes the delimited form to the record and the structured form to the spec', () => {
    const { record, spec: s } = applySharedPatch(group(), spec(), {
      description: 'd',
      tags: { a: '1', b: '2' },
      pyRequirements: ['pandas', 'numpy'],
      packages: ['org:x:1', 'org:y:2'],
      jobConfig: { k: 'v' },
      memorySettings: { dynamicAllocation: true },
      addArtifacts: { jars: [], files: ['store/b/data.csv'], pyFiles: ['store/b/util.py'] },
    });
    expect(record).toMatchObject({
      description: 'd',
      tags: 'a=1;b=2',
      pyRequirements: 'pandas;numpy',
      packages: 'org:x:1,org:y:2',
      jobConfig: { k: 'v' },
    });
    expect(s).toMatchObject({
      tags: { a: '1', b: '2' },
      pyRequirements: ['pandas', 'numpy'],
      packages: ['org:x:1', 'org:y:2'],
      jobConfig: { k: 'v' },
    });
    expect(record.memorySettings).toEqual({ dynamicAllocation: true });
    expect(s.memorySettings).toEqual({ dynamicAllocation: true });
    // A file of the same name and kind is replaced; others stay.
    expect(s.artifacts).toEqual({
      jars: [],
      files: ['store/b/data.csv'],
      pyFiles: ['store/a/main.py', 'store/b/util.py'],
    });
  });

  it('leaves absent fields and its inputs alone', () => {
    const g = group();
    const sp = spec();
    const { record, spec: s } = applySharedPatch(g, sp, {});
    expect(record).toEqual(group());
    expect(s).toEqual(spec());
    applySharedPatch(g, sp, { tags: { x: 'y' }, addArtifacts: { jars: ['j.jar'], files: [], pyFiles: [] } });
    expect(g).toEqual(group());
    expect(sp).toEqual(spec());
  });
});

describe('group settings', () => {
  it('restarts drivers only for Spark settings', () => {
    expect(
      applyGroupPatch(group(), spec(), { description: 'x', tags: { a: 'b' }, autoPause: true, scale: 4 }),
    ).toMatchObject({
      restart: false,
      group: { description: 'x', tags: 'a=b', autoPause: true, scale: 4 },
    });
    for (const patch of [
      { jobConfig: {} },
      { pyRequirements: [] },
      { packages: [] },
      { memorySettings: { dynamicAllocation: true } },
      { addArtifacts: { jars: [], files: [], pyFiles: [] } },
    ]) {
      expect(applyGroupPatch(group(), spec(), patch).restart).toBe(true);
    }
  });

  it('validates scale and refuses changes to an archived group', () => {
    expect(() => checkScale(group(), 0, 5)).not.toThrow();
    expect(() => checkScale(group(), 5, 5)).not.toThrow();
    for (const bad of [-1, 6, 1.5, Number.NaN])
      expect(() => checkScale(group(), bad, 5)).toThrow('scale must be a whole number from 0 to 5');
    const archived = archivedGroup(group(), 77);
    expect(archived).toMatchObject({ state: 'ARCHIVED', archivedTime: 77 });
    expect(() => checkScale(archived, 1, 5)).toThrow("group 'warm' is archived");
    expect(() => checkGroupPatch(archived, { description: 'x' }, 5)).toThrow("group 'warm' is archived");
    expect(() => checkGroupPatch(group(), { scale: 9 }, 5)).toThrow('scale must be');
    expect(() => checkGroupPatch(group(), { description: 'x' }, 5)).not.toThrow();
    expect(() => checkArchivable(group())).not.toThrow();
    expect(() => checkArchivable(archived)).toThrow("group 'warm' is already archived");
  });
});

describe('schedule settings', () => {
  it('applies schedule fields; null removes a start or end time', () => {
    const s0 = schedule({ startTime: 5, endTime: 9 });
    const { schedule: s, spec: sp } = applySchedulePatch(s0, spec(), {
      cron: '*/5 * * * *',
      args: ['a'],
      jobClass: 'other.py',
      startTime: null,
      endTime: 20,
      maxRetries: 2,
    });
    expect(s).toMatchObject({ cron: '*/5 * * * *', args: ['a'], jobClass: 'other.py', endTime: 20, maxRetries: 2 });
    expect(s.startTime).toBeUndefined();
    expect(sp).toMatchObject({ args: ['a'], jobClass: 'other.py' });
    expect(s0).toEqual(schedule({ startTime: 5, endTime: 9 }));
  });

  it('records when it was disabled, and forgets it when enabled again', () => {
    const d = withScheduleState(schedule(), 'DISABLED', 50);
    expect(d).toMatchObject({ state: 'DISABLED', disabledTime: 50 });
    expect(withScheduleState(d, 'ENABLED', 60).disabledTime).toBeUndefined();
  });

  it('pauses the Temporal Schedule unless ENABLED, with the state as its note', () => {
    const def = temporalScheduleDef(schedule({ endTime: 99 }), spec(), 'main');
    expect(def).toMatchObject({
      scheduleId: 's1',
      cron: '0 2 * * *',
      endTime: 99,
      paused: false,
      note: '',
      taskQueue: 'main',
      maxRetries: 0,
    });
    expect(def).not.toHaveProperty('startTime');
    expect(temporalScheduleDef(schedule({ state: 'PAUSED' }), spec(), 'main')).toMatchObject({
      paused: true,
      note: 'PAUSED',
    });
  });

  it('is due to be disabled a grace period after its endTime', () => {
    expect(disableDueIn(schedule(), 0)).toBeUndefined();
    expect(disableDueIn(schedule({ endTime: 1_000 }), 400)).toBe(600 + END_GRACE_MS);
    expect(disableDueIn(schedule({ endTime: 1_000, state: 'DISABLED' }), 400)).toBeUndefined();
  });

  it('checks state changes', () => {
    expect(() => checkPause(schedule())).not.toThrow();
    expect(() => checkPause(schedule({ state: 'DISABLED' }))).toThrow("schedule 'nightly' is DISABLED, not ENABLED");
    expect(() => checkResume(schedule(), 0)).toThrow('already ENABLED');
    expect(() => checkResume(schedule({ state: 'PAUSED', endTime: 10 }), 5)).not.toThrow();
    expect(() => checkResume(schedule({ state: 'DISABLED', endTime: 10 }), 10)).toThrow('ended at its endTime');
    expect(() => checkDisable(schedule({ state: 'PAUSED' }))).not.toThrow();
    expect(() => checkDisable(schedule({ state: 'DISABLED' }))).toThrow('already DISABLED');
  });
});
