// A synchronous execution on the direct channel answers only once its result's record is written (an API
// killed -9 right after answering leaves no answered execution without its record), but never waits more than
// RESULT_WRITE_WAIT_MS for it: with MongoDB down the caller still gets its result. The channel, the group's
// read and the projection are replaced; the real ones are covered by test/e2e/direct-execute.test.ts.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiDeps } from '../../api/deps';

const write = vi.hoisted(() => ({ resolve: undefined as (() => void) | undefined, calls: 0 }));

vi.mock('../../api/groups/direct', () => ({
  directChannel: () => ({
    execute: async () => ({ result: 'ok', error: null, startTime: 1, endTime: 2, instanceId: 'i-1' }),
  }),
}));
vi.mock('../../api/groups/reads', () => ({
  getRecentGroupDoc: async () => ({ id: 'g-1', name: 'g', kind: 'JOB', state: 'ACTIVE', clusterName: 'default' }),
  getGroupDoc: async () => ({}),
}));
vi.mock('../../activities/projection', () => ({
  createProjection: () => ({
    projectResult: () => {
      write.calls++;
      return new Promise<boolean>((r) => (write.resolve = () => r(true)));
    },
  }),
}));

const { executeInGroup } = await import('../../api/groups/executions');
const deps = { config: { EXECUTE_WAIT_MS: 1000, GROUP_IDLE_PAUSE_MS: 60_000 } } as unknown as ApiDeps;
const body = { type: 'interactive_job_execute', jobClass: 'jobs.Noop', jobConfig: {} } as never;

describe('a direct execution and its result record', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    write.resolve = undefined;
    write.calls = 0;
  });
  afterEach(() => vi.useRealTimers());

  it('answers once the record is written', async () => {
    let answered = false;
    const answer = executeInGroup(deps, 'g-1', body).then((r) => ((answered = true), r));
    await vi.advanceTimersByTimeAsync(500);
    expect(write.calls).toBe(1);
    expect(answered).toBe(false);
    write.resolve!();
    await expect(answer).resolves.toMatchObject({ result: 'ok', groupId: 'g-1' });
  });

  it('answers after 2 s without the record when the write does not end', async () => {
    let answered = false;
    const answer = executeInGroup(deps, 'g-1', body).then((r) => ((answered = true), r));
    await vi.advanceTimersByTimeAsync(1_900);
    expect(answered).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(answered).toBe(true);
    await expect(answer).resolves.toMatchObject({ result: 'ok' });
  });
});
