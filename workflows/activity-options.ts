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
