// The streams of group results (GET /group/job/result/updates), of jobs (GET /job/updates) and of the query
// history (GET /sql/history/updates), with their filters, shared by SSE and Socket.IO.
import type { Document } from 'mongodb';
import { parseTags } from '../../domain/delimited';
import { SQL_ENGINES } from '../../domain/sql';
import { arrayParam, enumArrayParam, type Query } from '../list';
import type { Need } from '../auth/roles';
import { toServerInfo, toSessionInfo } from '../connect/schemas';
import type { ConnectServerRecord, ConnectSessionRecord } from '../../domain/connect';
import { toJob, toResult, toSqlHistory } from '../resources';

export type Predicate = (doc: Document) => boolean;

const inList = (list: string[] | undefined, v: unknown) => !list?.length || list.includes(String(v));

/** Filters of the job and result streams: every given filter must match; within one filter any value matches. */
export function streamFilter(q: Query): Predicate {
  const jobIds = arrayParam(q, 'jobIds');
  const groupIds = arrayParam(q, 'groupIds');
  const clusterNames = arrayParam(q, 'clusterNames');
  const groupNames = arrayParam(q, 'groupNames');
  const tags = parseTags('tags', typeof q.tags === 'string' ? q.tags : undefined);
  return (d) =>
    inList(jobIds, d.jobId) &&
    inList(groupIds, d.groupId) &&
    inList(clusterNames, d.clusterName) &&
    inList(groupNames, d.groupName) &&
    Object.entries(tags).every(([k, v]) => (d.tagMap as Record<string, string> | undefined)?.[k] === v);
}

/** Filters of the query-history stream; an unknown engine is refused like in the history list. */
export function sqlHistoryFilter(q: Query): Predicate {
  const clusterIds = arrayParam(q, 'clusterIds');
  const engines = enumArrayParam(q, 'engines', SQL_ENGINES);
  return (d) => inList(clusterIds, d.clusterId) && inList(engines, d.engine);
}

/** Filters of the Spark Connect streams: the server's or session's cluster. */
export function connectFilter(q: Query): Predicate {
  const clusterIds = arrayParam(q, 'clusterIds');
  const clusterNames = arrayParam(q, 'clusterNames');
  return (d) => inList(clusterIds, d.clusterId) && inList(clusterNames, d.clusterName);
}

const CONNECT_FILTER_QUERY = [
  { name: 'clusterIds', description: 'cluster ids', array: true },
  { name: 'clusterNames', description: 'cluster names', array: true },
];

export const FILTER_QUERY = [
  { name: 'jobIds', description: 'job ids', array: true },
  { name: 'groupIds', description: 'group ids', array: true },
  { name: 'clusterNames', description: 'cluster names', array: true },
  { name: 'groupNames', description: 'group names (result stream)', array: true },
  { name: 'tags', description: 'key1=value1;key2=value2' },
];

const SQL_HISTORY_FILTER_QUERY = [
  { name: 'clusterIds', description: 'cluster ids', array: true },
  { name: 'engines', description: 'SPARK_SQL, TRINO', array: true },
];

/** Each stream declares the role it needs once; its SSE route and its Socket.IO namespace both check it. */
export const STREAMS = [
  {
    path: '/job/updates',
    namespace: '/jobs',
    role: 'viewer' as Need,
    event: 'job',
    feed: 'jobs',
    render: toJob,
    filter: streamFilter,
    query: FILTER_QUERY,
    what: 'Stream of job changes (4.20)',
  },
  {
    path: '/group/job/result/updates',
    namespace: '/group-job-results',
    role: 'viewer' as Need,
    event: 'jobInstanceResult',
    feed: 'results',
    render: toResult,
    filter: streamFilter,
    query: FILTER_QUERY,
    what: 'Stream of interactive job result changes (4.9)',
  },
  {
    path: '/sql/history/updates',
    namespace: '/sql-history',
    role: 'viewer' as Need,
    event: 'sqlStatement',
    feed: 'sqlHistory',
    render: toSqlHistory,
    filter: sqlHistoryFilter,
    query: SQL_HISTORY_FILTER_QUERY,
    what: 'Stream of query-history changes: each statement as it starts and ends',
  },
  {
    path: '/connect/server/updates',
    namespace: '/connect-servers',
    role: 'viewer' as Need,
    event: 'connectServer',
    feed: 'connectServers',
    render: (d: Document) => toServerInfo(d as unknown as ConnectServerRecord),
    filter: connectFilter,
    query: CONNECT_FILTER_QUERY,
    what: 'Stream of Spark Connect server changes: STARTING, RUNNING, FAILED, STOPPED',
  },
  {
    path: '/connect/session/updates',
    namespace: '/connect-sessions',
    role: 'viewer' as Need,
    event: 'connectSession',
    feed: 'connectSessions',
    render: (d: Document) => toSessionInfo(d as unknown as ConnectSessionRecord),
    filter: connectFilter,
    query: CONNECT_FILTER_QUERY,
    what: 'Stream of Spark Connect session changes: each session as it starts, calls (every 30 s at most) and ends',
  },
] as const;
