// The batched query-history writer: concurrent records go in few bulk writes, in order, one write at a time.
import type { Collection, Document } from 'mongodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHistoryWriter, FLUSH_AFTER_MS } from '../../api/sql/execute/history-writer';

type Op = { replaceOne: { replacement: Document; upsert: boolean } } | { insertOne: { document: Document } };
/** The record an operation writes, and how: an insert or an upsert. */
const recordOf = (o: Op) =>
  'insertOne' in o
    ? { doc: o.insertOne.document, how: 'insert' }
    : { doc: o.replaceOne.replacement, how: o.replaceOne.upsert ? 'upsert' : 'replace' };

function fakeCollection() {
  const batches: string[][] = [];
  const hows: string[][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const col = {
    async bulkWrite(ops: Op[]) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 10));
      batches.push(ops.map(recordOf).map(({ doc }) => `${doc._id}:${doc.state}`));
      hows.push(ops.map(recordOf).map(({ doc, how }) => `${doc._id}:${how}`));
      inFlight--;
    },
  } as unknown as Collection<Document>;
  return { col, batches, hows, maxInFlight: () => maxInFlight };
}

describe('query history writer', () => {
  afterEach(() => void vi.useRealTimers());

  it('batches records queued together into one bulk write, keeping their order', async () => {
    const f = fakeCollection();
    const w = createHistoryWriter(() => f.col);
    for (let i = 0; i < 20; i++) w.put({ _id: `s${i}`, state: 'FINISHED' });
    await w.flush();
    expect(f.batches).toHaveLength(1);
    expect(f.batches[0]).toHaveLength(20);
    expect(f.batches[0][0]).toBe('s0:FINISHED');
  });

  it('gathers records put apart in time, within FLUSH_AFTER_MS of the first, into one bulk write', async () => {
    vi.useFakeTimers();
    const f = fakeCollection();
    const w = createHistoryWriter(() => f.col);
    for (let i = 0; i < 3; i++) {
      w.put({ _id: `s${i}`, state: 'FINISHED' });
      await vi.advanceTimersByTimeAsync(FLUSH_AFTER_MS / 4);
    }
    expect(f.batches).toEqual([]); // the first record's time is not up yet
    await vi.advanceTimersByTimeAsync(FLUSH_AFTER_MS);
    expect(f.batches).toEqual([['s0:FINISHED', 's1:FINISHED', 's2:FINISHED']]);
  });

  it("writes a statement's RUNNING record before its final one, one bulk write at a time", async () => {
    const f = fakeCollection();
    const w = createHistoryWriter(() => f.col);
    w.put({ _id: 'a', state: 'RUNNING' });
    await new Promise((r) => setTimeout(r, FLUSH_AFTER_MS + 2)); // the first batch is being written (10 ms)
    w.put({ _id: 'a', state: 'FINISHED' });
    await w.flush();
    expect(f.batches.flat()).toEqual(['a:RUNNING', 'a:FINISHED']);
    expect(f.maxInFlight()).toBe(1);
  });

  it('writes only the last record of a statement whose records are queued together', async () => {
    const f = fakeCollection();
    const w = createHistoryWriter(() => f.col);
    w.put({ _id: 'a', state: 'RUNNING' });
    w.put({ _id: 'b', state: 'RUNNING' });
    w.put({ _id: 'a', state: 'FINISHED' });
    await w.flush();
    expect(f.batches).toEqual([['b:RUNNING', 'a:FINISHED']]);
  });

  it('keeps going when a write fails', async () => {
    let calls = 0;
    const col = {
      async bulkWrite() {
        if (++calls === 1) throw new Error('database down');
      },
    } as unknown as Collection<Document>;
    const w = createHistoryWriter(() => col);
    w.put({ _id: 'x', state: 'FINISHED' });
    await w.flush();
    w.put({ _id: 'y', state: 'FINISHED' });
    await w.flush();
    expect(calls).toBe(2);
  });

  it("inserts an id's first record and upserts a later one, also when the first is still queued", async () => {
    const f = fakeCollection();
    const w = createHistoryWriter(() => f.col);
    w.put({ _id: 'a', state: 'RUNNING' }, true);
    await w.flush();
    w.put({ _id: 'a', state: 'FINISHED' }, false);
    w.put({ _id: 'b', state: 'RUNNING' }, true);
    w.put({ _id: 'b', state: 'FINISHED' }, false); // replaces b's queued first record: b is still new
    w.put({ _id: 'c', state: 'FINISHED' }); // not said to be first
    await w.flush();
    expect(f.hows).toEqual([['a:insert'], ['a:upsert', 'b:insert', 'c:upsert']]);
    expect(f.batches[1]).toEqual(['a:FINISHED', 'b:FINISHED', 'c:FINISHED']);
  });

  it('upserts a first record whose id MongoDB already has, and loses none of the batch', async () => {
    const stored = new Map<string, Document>([['dup', { _id: 'dup', state: 'RUNNING' }]]);
    const col = {
      async bulkWrite(ops: Op[]) {
        const writeErrors: { code: number; index: number }[] = [];
        ops.forEach((o, index) => {
          const { doc, how } = recordOf(o);
          if (how === 'insert' && stored.has(doc._id)) writeErrors.push({ code: 11000, index });
          else stored.set(doc._id, doc);
        });
        if (writeErrors.length) throw Object.assign(new Error('E11000 duplicate key'), { writeErrors });
      },
    } as unknown as Collection<Document>;
    const w = createHistoryWriter(() => col);
    w.put({ _id: 'x', state: 'FINISHED' }, true);
    w.put({ _id: 'dup', state: 'FINISHED' }, true);
    w.put({ _id: 'y', state: 'FINISHED' }, true);
    await w.flush();
    expect([...stored.values()].map((d) => `${d._id}:${d.state}`).sort()).toEqual([
      'dup:FINISHED',
      'x:FINISHED',
      'y:FINISHED',
    ]);
  });
});
