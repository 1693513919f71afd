// How the MongoDB-protocol dev server (scripts/mongo/Launcher.java) stores documents in its data file: as BSON
// (BsonDocuments), since Java serialisation made the store's housekeeping and commits slow (bench:store). Stacks
// already have files of Java-serialised documents: they must open with every document as it was written, take new
// writes beside the old pages, and survive a kill -9 and a compaction at start. Every value type the wire carries
// must come back in its own type.
import { readFileSync } from 'node:fs';
import type { Document } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { canonical, COLLECTION, DB, documents, EXACT, FIXTURE, i32Of } from './store-format-fixture';
import { ownMongo, type OwnMongo } from '../../testkit/own-mongo';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** How often the data file names a class, as Java serialisation does in every document or index key it stores. */
const javaSerialised = (m: OwnMongo, cls: string) => readFileSync(m.file).toString('latin1').split(cls).length - 1;
const JAVA_DOCUMENT = 'de.bwaldvogel.mongo.bson.Document';
const JAVA_KEY = 'de.bwaldvogel.mongo.backend.KeyValue';
const JAVA_OBJECT_ID = 'de.bwaldvogel.mongo.bson.ObjectId';
const log = (m: OwnMongo) => readFileSync(m.log, 'utf8');

/** The unique indexes answer: each document by _id and by (tag, i32), and a duplicate of either is refused. */
async function checkIndexes(m: OwnMongo, ids: string[], tag: (id: string) => string) {
  const col = m.client.db(DB).collection<{ _id: string } & Document>(COLLECTION);
  for (const id of ids) {
    expect(await col.findOne({ _id: id }, { projection: { _id: 1 } })).toEqual({ _id: id });
    expect(await col.countDocuments({ tag: tag(id), i32: i32Of(id) })).toBe(1);
  }
  const dup = (d: Document) =>
    col.insertOne(d as { _id: string }).then(
      () => 'inserted',
      (e: { code?: number }) => e.code,
    );
  expect(await dup({ _id: ids[0] })).toBe(11000);
  expect(await dup({ _id: 'other', tag: tag(ids[1]), i32: i32Of(ids[1]) })).toBe(11000);
}

/** Documents in the server's order of _id (binary, as `sort({ _id: 1 })` gives for these strings). */
const byId = <T extends { _id: string }>(docs: T[]) => [...docs].sort((a, b) => (a._id < b._id ? -1 : 1));

async function readAll(m: OwnMongo) {
  const docs = await m.client.db(DB).collection(COLLECTION).find({}, EXACT).sort({ _id: 1 }).toArray();
  return canonical(docs);
}

/** Kills the server (-9) and starts it again on the same file (the client reconnects). */
async function restart(m: OwnMongo, env: Record<string, string> = {}) {
  await m.kill();
  await m.start(env);
}

describe("the dev server's data file", () => {
  it('opens a file of Java-serialised documents (written before BSON) with every document as it was written', async () => {
    const mongo = await ownMongo(cleanups, { dataFile: FIXTURE });
    // The fixture really is the old format: documents and index keys Java-serialised.
    expect(javaSerialised(mongo, JAVA_DOCUMENT)).toBeGreaterThan(300);
    expect(javaSerialised(mongo, JAVA_KEY)).toBeGreaterThan(300);
    expect(await readAll(mongo)).toEqual(canonical(byId(documents())));
    // Its unique indexes (_id, and tag+i32) were rewritten in BSON keys' order at start, and answer.
    expect(log(mongo)).toMatch(/index fixture\.docs\._index__id_ rewritten with BSON keys \(300 keys\)/);
    expect(log(mongo)).toMatch(/index fixture\.docs\._index_tag_1_i32_1 rewritten with BSON keys \(300 keys\)/);
    const some = documents().map((d) => d._id);
    await checkIndexes(mongo, some, () => 'v1');
    const col = mongo.client.db(DB).collection<{ _id: string } & Document>(COLLECTION);

    // New writes beside old pages: half the documents replaced, some updated in place, new ones inserted.
    const expected = new Map(documents().map((d) => [d._id as string, d]));
    for (const d of documents(300, 'v2').filter((_, i) => i % 2 === 0)) {
      await col.replaceOne({ _id: d._id }, d);
      expected.set(d._id as string, d);
    }
    await col.updateMany({ _id: { $in: ['d1', 'd3'] } }, { $set: { 'nested.state': 'KILLED' } });
    for (const id of ['d1', 'd3']) (expected.get(id)!.nested as { state: string }).state = 'KILLED';
    const added = documents(320, 'v3').slice(300);
    await col.insertMany(added);
    for (const d of added) expected.set(d._id as string, d);
    const want = canonical(byId([...expected.values()]));
    expect(await readAll(mongo)).toEqual(want);

    const rewrites = log(mongo).match(/rewritten with BSON keys/g)?.length;
    await restart(mongo);
    expect(await readAll(mongo)).toEqual(want);
    expect(await col.countDocuments({ tag: 'v2' })).toBe(150);
    // Rewritten once (the oplog's _id index too): the second start found them listed as BSON-keyed.
    expect(rewrites).toBe(3);
    expect(log(mongo).match(/rewritten with BSON keys/g)).toHaveLength(3);
    const tagOf = (id: string) => expected.get(id)!.tag as string;
    await checkIndexes(mongo, [...some, 'd310'], tagOf);

    // A compaction at start copies the file's pages, old and new: still the same documents.
    await restart(mongo, { MVSTORE_COMPACT_LIVE_PERCENT: '101' });
    expect(log(mongo)).toMatch(/compacted at start/);
    expect(log(mongo).match(/rewritten with BSON keys/g)).toHaveLength(3); // the compacted file keeps the list
    expect(await readAll(mongo)).toEqual(want);
    await checkIndexes(mongo, [...some, 'd310'], tagOf);
  });

  it('writes documents as BSON: a new file holds no Java-serialised document, and every type reads back', async () => {
    const mongo = await ownMongo(cleanups);
    const col = mongo.client.db(DB).collection<{ _id: string } & Document>(COLLECTION);
    await col.createIndex({ tag: 1, i32: 1 }, { unique: true });
    await col.insertMany(documents());
    await col.updateOne({ _id: 'd2' }, { $set: { tag: 'v2' } });
    const want = canonical(byId(documents().map((d) => (d._id === 'd2' ? { ...d, tag: 'v2' } : d))));
    expect(await readAll(mongo)).toEqual(want);

    // Acknowledged writes are in the file at a kill -9, and in BSON: neither the documents nor their oplog
    // entries are Java-serialised.
    await restart(mongo);
    expect(await readAll(mongo)).toEqual(want);
    expect(javaSerialised(mongo, JAVA_DOCUMENT)).toBe(0);
    expect(javaSerialised(mongo, JAVA_KEY)).toBe(0);
    // Nor the oplog's keys: its entries' _id is their timestamp (a Long), not an ObjectId the library makes.
    expect(javaSerialised(mongo, JAVA_OBJECT_ID)).toBe(0);
    const tagOf = (id: string) => (id === 'd2' ? 'v2' : 'v1');
    await checkIndexes(mongo, ['d0', 'd2', 'd10', 'd123', 'd299'], tagOf);

    await restart(mongo, { MVSTORE_COMPACT_LIVE_PERCENT: '101' });
    expect(log(mongo)).toMatch(/compacted at start/);
    expect(await readAll(mongo)).toEqual(want);
    expect(javaSerialised(mongo, JAVA_DOCUMENT)).toBe(0);
    await checkIndexes(mongo, ['d0', 'd2', 'd10', 'd123', 'd299'], tagOf);

    // A dropped index or collection leaves nothing behind that a new one with the same name would find.
    await col.dropIndex('tag_1_i32_1');
    await col.insertOne({ _id: 'again', tag: 'v1', i32: i32Of('d5') } as { _id: string });
    await col.drop();
    await col.insertMany(documents(3));
    expect(await col.countDocuments()).toBe(3);
    await restart(mongo);
    expect(await col.countDocuments()).toBe(3);
    expect(await col.insertOne({ _id: 'd1' }).catch((e: { code?: number }) => e.code)).toBe(11000);
  });
});
