// Named activity option sets, one place for every workflow's timeouts and retry policies.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunnerRequest, RunnerResponse } from '../domain/group';
import { groupTaskQueue } from '../domain/ids';

/** Read-model writes: local activities (no server round trip), retried until MongoDB answers. */
export const projection = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '100ms', maximumInterval: '5s' },
});

/** Launching and removing drivers: idempotent, so retried freely; a spec that cannot run is not. */
export const drivers = proxyActivities<Activities>({
  startToCloseTimeout: '10m',
  retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: ['ClusterNotFound', 'InvalidSpec'] },
});

/**
 * One launch attempt against a cluster that may not answer: the workflow sees each failure (it shows
 * the job UNKNOWN with the cause, waits and tries again until LAUNCH_DEADLINE_MS; workflows/launch.ts).
 */
export const launching = proxyActivities<Activities>({
  startToCloseTimeout: '10m',
  retry: { maximumAttempts: 1 },
});

/** A first quick try at removing a driver; if the cluster does not answer, `cleanup` goes on in the background. */
export const quickRemoval = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '500ms', maximumAttempts: 2, nonRetryableErrorTypes: ['ClusterNotFound'] },
});

/** Removing a driver in the background until its cluster answers again, backing off to one try in 5 min. */
export const cleanup = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '2s', maximumInterval: '5m', nonRetryableErrorTypes: ['ClusterNotFound'] },
});

/** Watching a driver: long-running and heartbeating, so a dead worker is noticed within 30 s. */
export const watch = proxyActivities<Activities>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: ['ClusterNotFound'] },
});

/** Short calls the API waits on (logs, deletions, Temporal Schedule changes). */
export const short = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '500ms',
    maximumInterval: '10s',
    maximumAttempts: 5,
    nonRetryableErrorTypes: ['ClusterNotFound', 'InvalidSchedule', 'Misconfigured'],
  },
});

/** Waiting for a SQL engine to answer: its own start timeout bounds the activity. */
export const engineStart = (timeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: timeoutMs + 60_000,
    heartbeatTimeout: '30s',
    retry: {
      initialInterval: '1s',
      maximumInterval: '10s',
      nonRetryableErrorTypes: ['ClusterNotFound', 'EngineFailed'],
    },
  });

/** The hourly retention sweep: long, retried a few times. */
export const retention = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  retry: { initialInterval: '10s', maximumInterval: '5m', maximumAttempts: 5 },
});

/** The runner's activity (Python, runner/runner.py), called by name on its group's task queue. */
interface RunnerActivities {
  executeJobInstance(req: RunnerRequest): Promise<RunnerResponse>;
}

/**
 * An execution on a group's runners. A paused group needs a driver start (tens of seconds) before a runner
 * polls, so there is no schedule-to-start limit unless `waitMs` is given: past it, with no runner taking it,
 * the execution ends with the reason (answered 409 by the API).
 */
export const runner = (groupId: string, waitMs: number | undefined) =>
  proxyActivities<RunnerActivities>({
    taskQueue: groupTaskQueue(groupId),
    startToCloseTimeout: '1h',
    ...(waitMs !== undefined ? { scheduleToStartTimeout: waitMs } : {}),
    retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 3 },
  });
