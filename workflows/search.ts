// Search attributes (registered on the dev server by scripts/services.ts) so operators filter in the UI.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { upsertSearchAttributes } from '@temporalio/workflow';
import { SearchAttr } from '../domain/ids';

export const SA = {
  jobId: defineSearchAttributeKey(SearchAttr.jobId, SearchAttributeType.KEYWORD),
  groupId: defineSearchAttributeKey(SearchAttr.groupId, SearchAttributeType.KEYWORD),
  scheduleId: defineSearchAttributeKey(SearchAttr.scheduleId, SearchAttributeType.KEYWORD),
  clusterName: defineSearchAttributeKey(SearchAttr.clusterName, SearchAttributeType.KEYWORD),
  jobState: defineSearchAttributeKey(SearchAttr.jobState, SearchAttributeType.KEYWORD),
  jobType: defineSearchAttributeKey(SearchAttr.jobType, SearchAttributeType.KEYWORD),
  sqlEngine: defineSearchAttributeKey(SearchAttr.sqlEngine, SearchAttributeType.KEYWORD),
};

/** Sets keyword search attributes; undefined values are left out. */
export function setSearch(values: Partial<Record<keyof typeof SA, string | undefined>>): void {
  const attrs: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) attrs[SA[k as keyof typeof SA].name] = [v];
  upsertSearchAttributes(attrs);
}
