// The streams of the interface (operations 4.9, 4.20) and their filters, shared by both transports.
import type { Document } from 'mongodb';
import { parseTags } from '../../domain/delimited';
import { arrayParam } from '../list';
import { toJob, toResult } from '../resources';

export type Query = Record<string, string | string[] | undefined>;
export type Predicate = (doc: Document) => boolean;

/** Filters of §4.9 and §4.20: every given filter must match; within one filter any value matches. */
export function streamFilter(q: Query): Predicate {
  const jobIds = arrayParam(q, 'jobIds');
  const groupIds = arrayParam(q, 'groupIds');
  const clusterNames = arrayParam(q, 'clusterNames');
  const groupNames = arrayParam(q, 'groupNames');
  const tags = parseTags('tags', typeof q.tags === 'string' ? q.tags : undefined);
  const inList = (list: string[] | undefined, v: unknown) => !list?.length || list.includes(String(v));
  return (d) =>
    inList(jobIds, d.jobId) &&
    inList(groupIds, d.groupId) &&
    inList(clusterNames, d.clusterName) &&
    inList(groupNames, d.groupName) &&
    Object.entries(tags).every(([k, v]) => (d.tagMap as Record<string, string> | undefined)?.[k] === v);
}

export const STREAMS = [
  { path: '/job/updates', namespace: '/jobs', event: 'job', feed: 'jobs', render: toJob, what: 'Stream of job changes (4.20)' },
  {
    path: '/group/job/result/updates',
    namespace: '/group-job-results',
    event: 'jobInstanceResult',
    feed: 'results',
    render: toResult,
    what: 'Stream of interactive job result changes (4.9)',
  },
] as const;

export const FILTER_QUERY = [
  { name: 'jobIds', description: 'job ids', array: true },
  { name: 'groupIds', description: 'group ids', array: true },
  { name: 'clusterNames', description: 'cluster names', array: true },
  { name: 'groupNames', description: 'group names (result stream)', array: true },
  { name: 'tags', description: 'key1=value1;key2=value2' },
];
