// Query-history writes of one API process, batched: records queue up and go to MongoDB in one ordered
// bulk write at a time, so many concurrent statements cost a few round trips instead of one each, and a
// statement's RUNNING record always lands before its final one.
import type { Collection, Document } from 'mongodb';
import { logger } from '../../../lib/log';

const log = logger('sql');

/**
 * Longest a record waits for the batch it joins. One bulk write of many records costs the API and MongoDB
 * about what a write of one costs, and no answer waits for these writes: at an engine's 20-50
 * statements/s, 100 ms gathers a few statements a write where 5 ms gathered one.
 */
export const FLUSH_AFTER_MS = 100;
const MAX_BATCH = 500;

export interface HistoryWriter {
  /** Queues the whole record (replacing any earlier one of its id). */
  put(doc: Document & { _id: string }): void;
  /** Resolves once everything queued so far is written. */
  flush(): Promise<void>;
}

export function createHistoryWriter(col: () => Collection<Document>): HistoryWriter {
  // By id: a statement's final record queued behind its RUNNING one replaces it (one write, not two).
  const queue = new Map<string, Document & { _id: string }>();
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();

  const writeBatch = async (batch: (Document & { _id: string })[]) => {
    const ops = batch.map((doc) => ({
      replaceOne: { filter: { _id: doc._id } as Document, replacement: doc, upsert: true },
    }));
    await col()
      .bulkWrite(ops, { ordered: true })
      .catch((err) => log.warn('query history not written', { records: batch.length, err: String(err) }));
  };
  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const all = [...queue.values()];
    queue.clear();
    for (let i = 0; i < all.length; i += MAX_BATCH) {
      const batch = all.slice(i, i + MAX_BATCH);
      chain = chain.then(() => writeBatch(batch));
    }
    return chain;
  };
  return {
    put(doc) {
      queue.delete(doc._id); // re-inserted last: the order of first records stays the order of puts
      queue.set(doc._id, doc);
      if (queue.size >= MAX_BATCH) void flush();
      else timer ??= setTimeout(() => void flush(), FLUSH_AFTER_MS);
    },
    flush,
  };
}
