// A stack's past work, written fast: job records replaced through four states each, as the projection writes
// them (whole documents with a version), so each write is a change event and an oplog entry. bench:idle and
// bench:group age a stack with it.
import type { Collection, Document } from 'mongodb';

const STATES = ['SUBMITTED', 'STARTING', 'BUSY', 'FINISHED'];

/** A job record of the past, `prefix-<n>`, in one of its states. */
export const pastJob = (prefix: string, n: number, state: string): Document => ({
  jobId: `${prefix}-${n}`,
  name: `${prefix} job ${n}`,
  state,
  clusterName: 'default',
  language: 'PYTHON',
  submitTime: Date.now(),
  tags: '',
  tagMap: {},
  attempt: 1,
  maxRetries: 0,
  padding: 'x'.repeat(600),
});

/** Writes number `from` up to `to` (exclusive) of the past writes, in ordered batches of 1,000. */
export async function writePastJobs(jobs: Collection<Document>, prefix: string, from: number, to: number) {
  for (let written = from; written < to;) {
    const n = Math.min(1000, to - written);
    await jobs.bulkWrite(
      Array.from({ length: n }, (_, k) => {
        const i = written + k;
        const job = Math.floor(i / STATES.length);
        return {
          replaceOne: {
            filter: { _id: `${prefix}-${job}` } as Document,
            replacement: { ...pastJob(prefix, job, STATES[i % STATES.length]), version: (i % STATES.length) + 1 },
            upsert: true,
          },
        };
      }),
      { ordered: true },
    );
    written += n;
  }
}
