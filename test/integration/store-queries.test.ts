// The MongoDB-protocol dev server (scripts/mongo/Launcher.java) answers a query that names a plain _id beside
// other fields from the _id index (IdFirst), not by reading the collection: the filter of every versioned write
// of the projection. Its answers must be MongoDB's: the other fields still decide, for find, replace, update,
// upsert and delete alike, and any other query goes as before. (How much faster it is: bench:group's figures
// after 100,000 past writes; a timed test would only measure the machine.)
import { MongoClient, type Collection, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

let client: MongoClient;
let col: Collection<{ _id: string } & Document>;

beforeAll(async () => {
  client = await MongoClient.connect(inject('mongoUrl'));
  col = client.db('store-queries-test').collection<{ _id: string } & Document>('jobs');
  await col.deleteMany({});
  await col.insertMany(
    Array.from({ length: 500 }, (_, i) => ({ _id: `j-${i}`, version: 1, state: 'SUBMITTED', n: i })),
  );
});
afterAll(async () => {
  await client?.db('store-queries-test').dropDatabase();
  await client?.close();
});

describe('queries by _id with other fields', () => {
  it('find the document only when the other fields match too', async () => {
    expect(await col.findOne({ _id: 'j-7', state: 'SUBMITTED' } as Document)).toMatchObject({ n: 7 });
    expect(await col.findOne({ _id: 'j-7', state: 'BUSY' } as Document)).toBeNull();
    expect(await col.findOne({ _id: 'j-7', version: { $lt: 1 } } as Document)).toBeNull();
    expect(await col.findOne({ _id: 'nope', state: 'SUBMITTED' } as Document)).toBeNull();
    expect(await col.countDocuments({ _id: 'j-7', n: { $gte: 7 } } as Document)).toBe(1);
  });

  it('replace a newer version, refuse an older one (the upsert then collides on _id), and insert a new _id', async () => {
    const write = (id: string, version: number, state: string) =>
      col
        .replaceOne({ _id: id, version: { $lt: version } } as Document, { version, state }, { upsert: true })
        .then((r) => r.modifiedCount + r.upsertedCount)
        .catch((e: { code?: number }) => `code ${e.code}`);
    expect(await write('j-1', 3, 'BUSY')).toBe(1);
    expect(await write('j-1', 2, 'STARTING')).toBe('code 11000');
    expect(await col.findOne({ _id: 'j-1' } as Document)).toMatchObject({ version: 3, state: 'BUSY' });
    expect(await write('new-1', 1, 'SUBMITTED')).toBe(1);
    expect(await col.countDocuments({ _id: 'new-1' } as Document)).toBe(1);
    expect(await col.countDocuments()).toBe(501);
  });

  it('update and delete only a document whose other fields match', async () => {
    expect((await col.updateOne({ _id: 'j-2', state: 'BUSY' } as Document, { $set: { x: 1 } })).matchedCount).toBe(0);
    expect(
      (await col.updateOne({ _id: 'j-2', state: 'SUBMITTED' } as Document, { $set: { x: 1 } })).modifiedCount,
    ).toBe(1);
    expect((await col.deleteOne({ _id: 'j-3', state: 'BUSY' } as Document)).deletedCount).toBe(0);
    expect((await col.deleteOne({ _id: 'j-3', state: 'SUBMITTED' } as Document)).deletedCount).toBe(1);
    expect(await col.findOne({ _id: 'j-2' } as Document)).toMatchObject({ x: 1 });
  });

  it('go as before for _id operators, documents and other queries', async () => {
    expect(await col.countDocuments({ _id: { $in: ['j-10', 'j-11', 'nope'] }, state: 'SUBMITTED' } as Document)).toBe(
      2,
    );
    expect(await col.countDocuments({ _id: { $gte: 'j-98' }, state: 'SUBMITTED' } as Document)).toBe(3);
    expect(await col.countDocuments({ n: { $lt: 10 }, state: 'SUBMITTED' } as Document)).toBe(8);
    expect(await col.findOne({ _id: 'j-20' } as Document)).toMatchObject({ n: 20 });
  });
});
