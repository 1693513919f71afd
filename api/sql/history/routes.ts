// Query history endpoint: parse, call the service, answer. Its live stream is in api/streams (catalog.ts).
import { SqlHistoryEntry } from '../../../domain/sql';
import type { ApiDeps } from '../../deps';
import { PageOf } from '../../resources';
import { LIST_QUERY, route } from '../../routing';
import { listHistory } from './service';

export const sqlHistoryRoutes = (deps: ApiDeps) => [
  route({
    method: 'get',
    path: '/sql/history',
    role: 'viewer',
    tag: 'sql',
    summary: 'List the query history: one record per statement run, newest first',
    query: [
      ...LIST_QUERY,
      { name: 'clusterIds', description: 'cluster ids', array: true },
      { name: 'engines', description: 'SPARK_SQL, TRINO', array: true },
      { name: 'states', description: 'RUNNING, FINISHED, ERROR, CANCELED, TIMEDOUT', array: true },
    ],
    response: PageOf(SqlHistoryEntry),
    errors: [409],
    handler: ({ query }) => listHistory(deps, query),
  }),
];
