// The retention sweep's workflow, started hourly by the Temporal Schedule of activities/retention.ts:
// one activity that removes what ended more than RETENTION_DAYS ago.
import type { RetentionSummary } from '../activities/retention';
import { retention } from './activity-options';

export async function retentionSweepWorkflow(): Promise<RetentionSummary> {
  return retention.retentionSweep();
}
