// Named activity option sets, one place for every workflow's timeouts and retry policies.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

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
