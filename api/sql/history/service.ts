// Query history (GET /sql/history): one record per statement, inserted RUNNING by the API that runs it and
// updated with the final state (api/sql/execute/). Read-only here.
import type { Document } from 'mongodb';
import { SQL_ENGINES, SQL_STATEMENT_STATES, type SqlHistoryEntry } from '../../../domain/sql';
import { Collections } from '../../../lib/mongo';
import type { ApiDeps } from '../../deps';
import { arrayParam, enumArrayParam, findPage, parseListQuery, searchFilter, type Page, type Query } from '../../list';
import { toSqlHistory } from '../../resources';

const SORTABLE = ['creationTime', 'startTime', 'completionTime', 'state', 'engine', 'clusterId', 'clusterName'];

/** Filters of GET /sql/history: every given filter must match; within one filter any value matches. */
export function historyFilter(query: Query): Document {
  const clusterIds = arrayParam(query, 'clusterIds');
  const engines = enumArrayParam(query, 'engines', SQL_ENGINES);
  const states = enumArrayParam(query, 'states', SQL_STATEMENT_STATES);
  return {
    ...(clusterIds?.length ? { clusterId: { $in: clusterIds } } : {}),
    ...(engines?.length ? { engine: { $in: engines } } : {}),
    ...(states?.length ? { state: { $in: states } } : {}),
  };
}

export async function listHistory(deps: ApiDeps, query: Query): Promise<Page<SqlHistoryEntry>> {
  const lq = parseListQuery(query, SORTABLE, deps.config.MAX_PAGE_SIZE, ['creationTime', -1]);
  const filter = { ...historyFilter(query), ...searchFilter(lq.search, ['statement']) };
  return findPage(deps.store.col(Collections.sqlHistory), filter, lq, toSqlHistory);
}
