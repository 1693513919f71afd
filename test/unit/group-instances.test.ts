import { describe, expect, it } from 'vitest';
import {
  desiredScale,
  drainRank,
  instanceJobState,
  instanceStatusEffect,
  newInstanceJob,
  pauseCheckIn,
  planReconcile,
  shouldPause,
  type IdleView,
} from '../../domain/group-instances';
import { group, inst, job, spec } from './domain-fixtures';

describe('group reconcile', () => {
  it('wants no drivers while archived or paused', () => {
    expect(desiredScale({ state: 'ACTIVE', scale: 3 }, false)).toBe(3);
    expect(desiredScale({ state: 'ACTIVE', scale: 3 }, true)).toBe(0);
    expect(desiredScale({ state: 'ARCHIVED', scale: 3 }, false)).toBe(0);
    // Paused on request: none, whatever autoPause says.
    expect(desiredScale({ state: 'ACTIVE', scale: 3, paused: true }, false)).toBe(0);
    expect(desiredScale({ state: 'ACTIVE', scale: 3, paused: false }, false)).toBe(3);
  });

  it('starts the missing instances', () => {
    expect(planReconcile([], 1, 2)).toEqual({ start: 2, drain: [], stop: [] });
    expect(planReconcile([inst('a')], 1, 2)).toEqual({ start: 1, drain: [], stop: [] });
    expect(planReconcile([inst('a'), inst('b')], 1, 2)).toEqual({ start: 0, drain: [], stop: [] });
  });

  it('scales down the least useful first: not ready, then idle; busy ones drain and stop once idle', () => {
    const busy = inst('busy', { busy: true });
    const idle = inst('idle');
    const starting = inst('starting', { ready: false });
    expect(drainRank(starting)).toBeLessThan(drainRank(idle));
    expect(drainRank(idle)).toBeLessThan(drainRank(busy));
    expect(planReconcile([busy, idle, starting], 1, 1)).toEqual({
      start: 0,
      drain: ['idle', 'starting'],
      stop: ['idle', 'starting'],
    });
    expect(planReconcile([busy, idle, starting], 1, 0)).toEqual({
      start: 0,
      drain: ['busy', 'idle', 'starting'],
      stop: ['idle', 'starting'],
    });
    // A busy instance already draining stops once it reports idle.
    expect(planReconcile([inst('busy', { draining: true })], 1, 0)).toEqual({ start: 0, drain: [], stop: ['busy'] });
  });

  it('after an update, replaces outdated instances but keeps them serving until a new one is ready', () => {
    const old = [inst('a', { generation: 1 }), inst('b', { generation: 1, busy: true })];
    expect(planReconcile(old, 2, 2)).toEqual({ start: 2, drain: ['a', 'b'], stop: [] });
    const drained = old.map((i) => ({ ...i, draining: true }));
    const fresh = [inst('c', { generation: 2, ready: false }), inst('d', { generation: 2, ready: false })];
    expect(planReconcile([...drained, ...fresh], 2, 2)).toEqual({ start: 0, drain: [], stop: [] });
    fresh[0].ready = true;
    expect(planReconcile([...drained, ...fresh], 2, 2)).toEqual({ start: 0, drain: [], stop: ['a'] });
    // Nothing wanted: outdated instances stop at once.
    expect(planReconcile(old, 2, 0)).toEqual({ start: 0, drain: ['a', 'b'], stop: ['a'] });
  });

  it('never starts or stops the same instance twice in one plan', () => {
    const plan = planReconcile([inst('a', { draining: true }), inst('b')], 1, 3);
    expect(plan).toEqual({ start: 2, drain: [], stop: ['a'] });
  });
});

describe('instance status', () => {
  it('ends the instance when its driver is gone, whatever the phase', () => {
    const j = job({ state: 'READY' });
    expect(instanceStatusEffect(j, inst('a'), { phase: 'FAILED', message: 'OOM' })).toEqual({
      ended: true,
      error: 'OOM',
    });
    expect(instanceStatusEffect(j, inst('a'), { phase: 'MISSING' })).toEqual({
      ended: true,
      error: 'driver disappeared',
    });
    expect(instanceStatusEffect(j, inst('a'), { phase: 'SUCCEEDED' })).toEqual({ ended: true, error: 'driver ended' });
  });

  it('records a new appId, UNKNOWN while unobservable, and the live state when seen again', () => {
    expect(
      instanceStatusEffect(job({ state: 'STARTING' }), inst('a', { ready: false }), { phase: 'RUNNING', appId: 'app' }),
    ).toEqual({ ended: false, patch: { appId: 'app' } });
    expect(
      instanceStatusEffect(job({ state: 'READY', appId: 'app' }), inst('a'), { phase: 'RUNNING', appId: 'app' }),
    ).toEqual({ ended: false, patch: {} });
    expect(instanceStatusEffect(job({ state: 'BUSY' }), inst('a', { busy: true }), { phase: 'UNKNOWN' })).toEqual({
      ended: false,
      patch: { state: 'UNKNOWN' },
    });
    expect(instanceStatusEffect(job({ state: 'UNKNOWN' }), inst('a', { busy: true }), { phase: 'RUNNING' })).toEqual({
      ended: false,
      patch: { state: 'BUSY' },
    });
    expect(instanceJobState({ ready: false, busy: false })).toBe('STARTING');
    expect(instanceJobState({ ready: true, busy: false })).toBe('READY');
    expect(instanceJobState({ ready: true, busy: true })).toBe('BUSY');
  });
});

describe('autoPause', () => {
  const view = (over: Partial<IdleView> = {}): IdleView => ({
    group: { autoPause: true, state: 'ACTIVE' },
    paused: false,
    instances: [{ ready: true, busy: false }],
    lastActivity: 1_000,
    idlePauseMs: 500,
    ...over,
  });

  it('pauses an autoPause group idle for idlePauseMs with a ready driver and none busy', () => {
    expect(shouldPause(view(), 1_499)).toBe(false);
    expect(shouldPause(view(), 1_500)).toBe(true);
    expect(shouldPause(view({ group: { autoPause: false, state: 'ACTIVE' } }), 9_999)).toBe(false);
    expect(shouldPause(view({ paused: true }), 9_999)).toBe(false);
    expect(shouldPause(view({ group: { autoPause: true, state: 'ARCHIVED' } }), 9_999)).toBe(false);
    expect(shouldPause(view({ instances: [{ ready: true, busy: true }] }), 9_999)).toBe(false);
    expect(shouldPause(view({ instances: [{ ready: false, busy: false }] }), 9_999)).toBe(false);
  });

  it('says when to look again', () => {
    expect(pauseCheckIn(view(), 1_200)).toBe(300);
    expect(pauseCheckIn(view(), 5_000)).toBe(1);
    expect(pauseCheckIn(view({ instances: [] }), 1_200)).toBeUndefined();
    expect(pauseCheckIn(view({ paused: true }), 1_200)).toBeUndefined();
  });
});

describe('new instance record', () => {
  it("is a STARTING INTERACTIVE job named after the group, with the group's settings", () => {
    const j = newInstanceJob(group(), spec({ jobConfig: { a: '1', b: '2' } }), 3, 42);
    expect(j).toMatchObject({
      jobId: 'g1-3',
      groupId: 'g1',
      jobName: 'warm-3',
      jobType: 'INTERACTIVE',
      state: 'STARTING',
      jobConfig: 'a=1;b=2',
      pyRequirements: 'numpy',
      submitTime: 42,
      attempt: 1,
      maxRetries: 0,
    });
  });
});
