import { describe, expect, it } from 'vitest';
import {
  afterFailure,
  crashLoopAt,
  crashLoopError,
  crashLooping,
  nextStartAt,
  noCrashLoop,
  SQL_ENGINE_CRASH_LOOP,
} from '../../domain/broken-clusters/crash-loops';
import { noReadyInstanceError, whyNoReadyInstance } from '../../domain/broken-clusters/no-ready-instance';
import {
  launchDeadlineError,
  pastDeadline,
  relaunchDelayMs,
  unreachableError,
} from '../../domain/broken-clusters/unreachable';
import { cleanupNote, withReachability } from '../../domain/job-transitions';
import { job } from './domain-fixtures';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const settings = { limit: 3, backoffMs: 1000, maxBackoffMs: 5000 };

describe('unreachable clusters', () => {
  it('a job goes UNKNOWN with the cause and since when, keeps the first since, and gets its old error back', () => {
    const before = job({ state: 'BUSY', error: 'attempt 1 failed: OOM' });
    const down = withReachability(before, 'Kubernetes API server k8s:6443 unreachable: ECONNREFUSED', T0);
    expect(down.job.state).toBe('UNKNOWN');
    expect(down.job.error).toBe(
      'Kubernetes API server k8s:6443 unreachable: ECONNREFUSED (cluster unreachable since 2026-01-01T12:00:00.000Z)',
    );
    const still = withReachability(down.job, 'HTTP 503', T0 + 5000, down.unreachable);
    expect(still.job.error).toBe(unreachableError('HTTP 503', T0));
    const back = withReachability({ ...still.job, state: 'BUSY' }, undefined, T0 + 9000, still.unreachable);
    expect(back.job).toMatchObject({ state: 'BUSY', error: 'attempt 1 failed: OOM' });
    expect(back.unreachable).toBeUndefined();
    const clean = withReachability(job(), 'x', T0);
    expect('error' in withReachability(clean.job, undefined, T0, clean.unreachable).job).toBe(false);
  });

  it('launch attempts back off to 30 s, and the deadline counts from the first attempt', () => {
    expect([1, 2, 3, 6, 20].map(relaunchDelayMs)).toEqual([1000, 2000, 4000, 30_000, 30_000]);
    expect(pastDeadline(T0, 600_000, T0 + 599_999)).toBe(false);
    expect(pastDeadline(T0, 600_000, T0 + 600_000)).toBe(true);
    expect(launchDeadlineError(600_000, 'ECONNREFUSED')).toBe(
      'the driver did not start within 10 min (LAUNCH_DEADLINE_MS): ECONNREFUSED',
    );
    expect(launchDeadlineError(4000)).toBe('the driver did not start within 4 s (LAUNCH_DEADLINE_MS)');
  });

  it('names the drivers left to remove, or nothing', () => {
    expect(cleanupNote(new Map())).toBeUndefined();
    expect(cleanupNote(new Map([['job-a-1', 'HTTP 503']]))).toBe(
      'driver job-a-1 not removed yet (HTTP 503); retrying in the background',
    );
  });
});

describe('crash loops', () => {
  it('backs off exponentially up to the cap, and gives up at the limit', () => {
    let c = noCrashLoop();
    expect(nextStartAt(c, settings)).toBe(0);
    c = afterFailure(c, 'pip: no such package numpyy', T0);
    expect(nextStartAt(c, settings) - T0).toBe(1000);
    c = afterFailure(c, 'pip: no such package numpyy', T0);
    expect(nextStartAt(c, settings) - T0).toBe(2000);
    expect(crashLooping(c, settings)).toBe(false);
    c = afterFailure(c, 'pip: no such package numpyy', T0);
    expect(crashLooping(c, settings)).toBe(true);
    expect(nextStartAt({ ...c, failures: 10 }, settings) - T0).toBe(5000);
    expect(crashLoopError(c)).toBe(
      'stopped replacing drivers after 3 consecutive failures before READY; last: pip: no such package numpyy. ' +
        'Rescale, update or restart the group to try again',
    );
  });
});

describe('crash loops within a window (SQL engines)', () => {
  it('count only recent failures, start again at once, and carry over as times', () => {
    const s = SQL_ENGINE_CRASH_LOOP;
    let c = afterFailure(noCrashLoop(), 'died', T0, s);
    c = afterFailure(c, 'died', T0 + 60_000, s);
    expect(crashLooping(c, s)).toBe(false);
    expect(nextStartAt(c, s)).toBe(T0 + 60_000);
    // The first failure is past the 5 minute window by now: two count, not three.
    c = afterFailure(c, 'died', T0 + 300_000, s);
    expect(c).toMatchObject({ failures: 2, times: [T0 + 60_000, T0 + 300_000] });
    c = afterFailure(crashLoopAt(c.times!), 'died', T0 + 301_000, s);
    expect(crashLooping(c, s)).toBe(true);
    expect(crashLoopAt([])).toEqual(noCrashLoop());
  });
});

describe('executions without a ready instance', () => {
  it('say why: the group gave up, the cluster does not answer, drivers failing, or all busy', () => {
    expect(whyNoReadyInstance('stopped replacing drivers', [])).toBe('stopped replacing drivers');
    expect(
      whyNoReadyInstance(undefined, [
        { jobId: 'g-2', state: 'UNKNOWN', error: 'k8s:6443 unreachable' },
        { jobId: 'g-1', state: 'FAILED', error: 'exit 1' },
      ]),
    ).toBe('cluster unreachable: k8s:6443 unreachable; drivers failing; last error: exit 1');
    expect(whyNoReadyInstance(undefined, [{ jobId: 'g-1', state: 'BUSY' }])).toBe('1 instance(s) busy');
    expect(whyNoReadyInstance(undefined, [])).toBe('the group has no instances');
    expect(noReadyInstanceError(60_000, 'x')).toBe(
      'no ready instance took the execution within 1 min (EXECUTE_WAIT_MS): x',
    );
  });
});
