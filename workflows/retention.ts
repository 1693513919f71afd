// The retention sweep's workflow, started hourly by the Temporal Schedule of activities/retention.ts:
// one activity that removes what ended more than RETENTION_DAYS ago.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RetentionSummary } from '../activities/retention';

const { retentionSweep } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  retry: { initialInterval: '10s', maximumInterval: '5m', maximumAttempts: 5 },
});

export async function retentionSweepWorkflow(): Promise<RetentionSummary> {
  return retentionSweep();
}
