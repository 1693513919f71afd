// Query-history writes of one API process, batched: records queue up and go to MongoDB in one bulk write at
// a time, so many concurrent statements cost a few round trips instead of one each, and a statement's RUNNING
// record always lands before its final one.
import type { AnyBulkWriteOperation, Collection, Document, MongoBulkWriteError } from 'mongodb';
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
  /**
   * Queues the whole record (replacing any earlier one of its id). `first`: no record of this id was put
   * before, so it is inserted, which costs MongoDB less than the upsert a later record of the id takes.
   */
  put(doc: Document & { _id: string }, first?: boolean): void;
  /** Resolves once everything queued so far is written. */
  flush(): Promise<void>;
}

interface Queued {
  doc: Document & { _id: string };
  first: boolean;
}

const DUPLICATE_KEY = 11000;

const upsert = (doc: Document & { _id: string }) => ({
  replaceOne: { filter: { _id: doc._id } as Document, replacement: doc, upsert: true },
});

export function createHistoryWriter(col: () => Collection<Document>): HistoryWriter {
  // By id: a statement's final record queued behind its RUNNING one replaces it (one write, not two).
  const queue = new Map<string, Queued>();
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();

  // Each id is in a batch once, and batches are written one at a time in order: the order within one is free.
  const writeBatch = async (batch: Queued[]) => {
    const ops: AnyBulkWriteOperation[] = batch.map(({ doc, first }) =>
      first ? { insertOne: { document: doc as Document } } : upsert(doc),
    );
    try {
      await col().bulkWrite(ops, { ordered: false });
    } catch (err) {
      // An id said to be new that MongoDB already has (never expected): its record replaces the stored one.
      // The records a bulk write refused (one error or several), or undefined when the whole write failed.
      const refused = (err as Partial<MongoBulkWriteError>).writeErrors;
      const errors = refused === undefined ? undefined : [refused].flat();
      const again = (errors ?? [])
        .filter((e) => e.code === DUPLICATE_KEY && batch[e.index]?.first)
        .map((e) => upsert(batch[e.index].doc));
      const lost = (errors?.length ?? batch.length) - again.length;
      if (lost) log.warn('query history not written', { records: lost, err: String(err) });
      if (again.length)
        await col()
          .bulkWrite(again, { ordered: false })
          .catch((e) => log.warn('query history not written', { records: again.length, err: String(e) }));
    }
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
    put(doc, first = false) {
      // Replacing a queued record that was the id's first: nothing of the id is stored yet.
      const queued = queue.get(doc._id);
      queue.delete(doc._id); // re-inserted last: the order of first records stays the order of puts
      queue.set(doc._id, { doc, first: queued ? queued.first : first });
      if (queue.size >= MAX_BATCH) void flush();
      else timer ??= setTimeout(() => void flush(), FLUSH_AFTER_MS);
    },
    flush,
  };
}
