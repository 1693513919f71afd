// The API's view of the resource shapes of domain/resources.ts: read-model documents turned into
// resources, and the envelopes (pages, created ids) responses wrap them in.
import type { Document } from 'mongodb';
import { z } from 'zod';
import type { Job, JobInstanceResult } from '../domain/resources';
import type { SqlHistoryEntry } from '../domain/sql';
import { resourceOf } from './list';
import { jobLinks } from './spark-ui/links';

/** The read-model document → the Job resource (internal fields dropped). */
export const toJob = (d: Document): Job => {
  const job = resourceOf<Job>(d);
  return { ...job, ...jobLinks(job) };
};

/** Results carry their group's name, cluster and tags for the stream filters; the resource does not. */
export const toResult = (d: Document): JobInstanceResult => resourceOf<JobInstanceResult>(d, ['clusterName']);

/** A query-history document → the SqlHistoryEntry resource (its `_id` is the entry's id). */
export const toSqlHistory = (d: Document): SqlHistoryEntry => resourceOf<SqlHistoryEntry>(d);

export const IdResponse = (key: string) => z.object({ [key]: z.string() });

export const PageOf = (item: z.ZodType) =>
  z.object({
    page: z.object({ number: z.number().int(), size: z.number().int(), offset: z.number().int(), paged: z.boolean() }),
    sort: z.array(z.string()),
    totalElements: z.number().int(),
    totalPages: z.number().int(),
    first: z.boolean(),
    last: z.boolean(),
    empty: z.boolean(),
    content: z.array(item),
  });
