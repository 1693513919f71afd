// How the MongoDB-protocol dev server (scripts/mongo/Launcher.java) stores documents in its data file: as BSON
// (BsonDocuments), since Java serialisation made the store's housekeeping and commits slow (bench:store). Stacks
// already have files of Java-serialised documents: they must open with every document as it was written, take new
// writes beside the old pages, and survive a kill -9 and a compaction at start. Every value type the wire carries
// must come back in its own type.
import { readFileSync } from 'node:fs';
import type { Document } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { canonical, COLLECTION, DB, documents, EXACT, FIXTURE } from './store-format-fixture';
import { ownMongo, type OwnMongo } from './own-mongo';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** The class name Java serialisation writes into every document it stores. */
const JAVA_DOCUMENT = 'de.bwaldvogel.mongo.bson.Document';
const javaDocuments = (m: OwnMongo) => readFileSync(m.file).toString('latin1').split(JAVA_DOCUMENT).length - 1;

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
    expect(javaDocuments(mongo)).toBeGreaterThan(300); // the fixture really is the old format
    expect(await readAll(mongo)).toEqual(canonical(documents()));
    const col = mongo.client.db(DB).collection<{ _id: string } & Document>(COLLECTION);
    // The index written then still answers.
    expect(await col.countDocuments({ tag: 'v1', i32: { $gte: 100, $lt: 110 } })).toBe(10);

    // New writes beside old pages: half the documents replaced, some updated in place, new ones inserted.
    const expected = new Map(documents().map((d) => [d._id as string, d]));
    for (const d of documents(300, 'v2').filter((_, i) => i % 2 === 0)) {
      await col.replaceOne({ _id: d._id }, d);
      expected.set(d._id as string, d);
    }
    await col.updateMany({ _id: { $in: ['d0001', 'd0003'] } }, { $set: { 'nested.state': 'KILLED' } });
    for (const id of ['d0001', 'd0003']) (expected.get(id)!.nested as { state: string }).state = 'KILLED';
    const added = documents(320, 'v3').slice(300);
    await col.insertMany(added);
    for (const d of added) expected.set(d._id as string, d);
    const want = canonical([...expected.values()].sort((a, b) => String(a._id).localeCompare(String(b._id))));
    expect(await readAll(mongo)).toEqual(want);

    await restart(mongo);
    expect(await readAll(mongo)).toEqual(want);
    expect(await col.countDocuments({ tag: 'v2' })).toBe(150);

    // A compaction at start copies the file's pages, old and new: still the same documents.
    await restart(mongo, { MVSTORE_COMPACT_LIVE_PERCENT: '101' });
    expect(readFileSync(mongo.log, 'utf8')).toMatch(/compacted at start/);
    expect(await readAll(mongo)).toEqual(want);
  });

  it('writes documents as BSON: a new file holds no Java-serialised document, and every type reads back', async () => {
    const mongo = await ownMongo(cleanups);
    const col = mongo.client.db(DB).collection<{ _id: string } & Document>(COLLECTION);
    await col.insertMany(documents());
    await col.updateOne({ _id: 'd0002' }, { $set: { tag: 'v2' } });
    const want = canonical(documents().map((d) => (d._id === 'd0002' ? { ...d, tag: 'v2' } : d)));
    expect(await readAll(mongo)).toEqual(want);

    // Acknowledged writes are in the file at a kill -9, and in BSON: neither the documents nor their oplog
    // entries are Java-serialised.
    await restart(mongo);
    expect(await readAll(mongo)).toEqual(want);
    expect(javaDocuments(mongo)).toBe(0);

    await restart(mongo, { MVSTORE_COMPACT_LIVE_PERCENT: '101' });
    expect(readFileSync(mongo.log, 'utf8')).toMatch(/compacted at start/);
    expect(await readAll(mongo)).toEqual(want);
    expect(javaDocuments(mongo)).toBe(0);
  });
});
