import { describe, expect, it } from 'vitest';
import {
  afterFailedTry,
  busyOnceRunning,
  checkStoppable,
  endReplaces,
  failedTryReason,
  finishedJob,
  finishedOnSuccess,
  startingJob,
  tryOutcome,
  withDriverStatus,
} from '../../domain/job-transitions';
import { job } from './domain-fixtures';

describe('job state transitions', () => {
  it('follows the driver: PENDING is STARTING, RUNNING is BUSY with the first start time kept, UNKNOWN is UNKNOWN', () => {
    const starting = withDriverStatus(startingJob(job()), { phase: 'PENDING' }, 5);
    expect(starting.state).toBe('STARTING');
    const busy = withDriverStatus(starting, { phase: 'RUNNING', appId: 'app-1' }, 7);
    expect(busy).toMatchObject({ state: 'BUSY', appId: 'app-1', startTime: 7 });
    expect(withDriverStatus(busy, { phase: 'RUNNING', startTime: 99 }, 9).startTime).toBe(7);
    expect(withDriverStatus(job(), { phase: 'RUNNING', startTime: 3 }, 9).startTime).toBe(3);
    expect(withDriverStatus(busy, { phase: 'UNKNOWN' }, 9).state).toBe('UNKNOWN');
    expect(withDriverStatus(busy, { phase: 'FAILED' }, 9).state).toBe('BUSY');
  });

  it('keeps the start time of a driver that had already ended when first seen, and the state for the workflow to decide', () => {
    const starting = withDriverStatus(startingJob(job()), { phase: 'PENDING' }, 5);
    const ended = withDriverStatus(starting, { phase: 'SUCCEEDED', startTime: 4, endTime: 6 }, 9);
    expect(ended).toMatchObject({ state: 'STARTING', startTime: 4 });
    expect(withDriverStatus(starting, { phase: 'FAILED', startTime: 4 }, 9).startTime).toBe(4);
    expect(withDriverStatus(starting, { phase: 'FAILED' }, 9).startTime).toBeUndefined();
  });

  it('does not change the record it was given', () => {
    const j = job();
    withDriverStatus(j, { phase: 'RUNNING', appId: 'a' }, 1);
    finishedJob(j, 'FAILED', 2, 'x');
    expect(j).toEqual(job());
  });

  it('tells how a try ended', () => {
    expect(tryOutcome({ phase: 'SUCCEEDED' })).toBe('succeeded');
    expect(tryOutcome({ phase: 'FAILED' })).toBe('failed');
    expect(tryOutcome({ phase: 'MISSING' })).toBe('failed');
    for (const phase of ['PENDING', 'RUNNING', 'UNKNOWN'] as const) expect(tryOutcome({ phase })).toBe('live');
    expect(failedTryReason({ phase: 'FAILED', message: 'exit 1' })).toBe('exit 1');
    expect(failedTryReason({ phase: 'MISSING' })).toBe('the driver disappeared');
    expect(failedTryReason({ phase: 'FAILED' })).toBe('the driver failed');
  });

  it('retries while attempt ≤ maxRetries, then fails with the reason', () => {
    const first = afterFailedTry(job({ maxRetries: 1, attempt: 1, appId: 'app-1', state: 'BUSY' }), 'exit 1', 10);
    expect(first.retry).toBe(true);
    expect(first.job).toMatchObject({ attempt: 2, error: 'attempt 1 failed: exit 1', state: 'BUSY' });
    expect(first.job.appId).toBeUndefined();
    const second = afterFailedTry(first.job, 'exit 2', 20);
    expect(second.retry).toBe(false);
    expect(second.job).toMatchObject({ attempt: 2, state: 'FAILED', error: 'exit 2', endTime: 20 });
    expect(afterFailedTry(job({ maxRetries: 0 }), 'x', 1).retry).toBe(false);
  });

  it('finishes with an error, or clears an earlier one', () => {
    expect(finishedJob(job(), 'CANCELED', 5, 'cancelled on request')).toMatchObject({
      state: 'CANCELED',
      endTime: 5,
      error: 'cancelled on request',
    });
    expect(finishedJob(job({ error: 'attempt 1 failed: x' }), 'FINISHED', 5)).not.toHaveProperty('error');
  });

  it('refuses to stop a job that has ended', () => {
    expect(() => checkStoppable(job({ state: 'BUSY' }))).not.toThrow();
    for (const state of ['FINISHED', 'FAILED', 'CANCELED'] as const)
      expect(() => checkStoppable(job({ state }))).toThrow(`job j1 is already ${state}`);
  });
});

describe('read-model write versions', () => {
  it('grow with each write, and a later workflow task never reuses an earlier one', async () => {
    const { nextVersion, VERSION_STRIDE } = await import('../../domain/versions');
    expect(nextVersion(0, 0, 3)).toBe(3 * VERSION_STRIDE);
    expect(nextVersion(3 * VERSION_STRIDE, 0, 3)).toBe(3 * VERSION_STRIDE + 1);
    // A failed task at history length 64 wrote v; its retry at 68 writes above every version of it.
    let v = 0;
    for (let i = 0; i < 5; i++) v = nextVersion(v, 0, 64);
    expect(nextVersion(0, 0, 68)).toBeGreaterThan(v);
    // After continue-as-new the history starts again, the versions do not.
    expect(nextVersion(v, v, 2)).toBeGreaterThan(v);
  });
});

describe('an ended job does not change state again', () => {
  it('lets an end replace a live record or the same end, never another end', () => {
    expect(endReplaces(undefined, 'FINISHED')).toBe(true);
    expect(endReplaces('BUSY', 'FINISHED')).toBe(true);
    expect(endReplaces('FINISHED', 'FINISHED')).toBe(true);
    expect(endReplaces('FINISHED', 'CANCELED')).toBe(false);
    expect(endReplaces('CANCELED', 'FAILED')).toBe(false);
    // Other states are ordered by versions alone.
    expect(endReplaces('FINISHED', 'BUSY')).toBe(true);
  });

  it('the watch writes BUSY only the first time a STARTING job runs, and FINISHED only when its driver succeeded', () => {
    const starting = startingJob(job());
    expect(busyOnceRunning(starting, { phase: 'RUNNING' }, 7)).toMatchObject({ state: 'BUSY', startTime: 7 });
    expect(busyOnceRunning(starting, { phase: 'PENDING' }, 7)).toBeUndefined();
    expect(busyOnceRunning({ ...starting, state: 'BUSY' }, { phase: 'RUNNING' }, 7)).toBeUndefined();
    const busy = withDriverStatus(starting, { phase: 'RUNNING' }, 7);
    expect(finishedOnSuccess(busy, { phase: 'SUCCEEDED' }, 9)).toMatchObject({
      state: 'FINISHED',
      endTime: 9,
      startTime: 7,
    });
    expect(finishedOnSuccess(busy, { phase: 'FAILED' }, 9)).toBeUndefined();
  });
});
