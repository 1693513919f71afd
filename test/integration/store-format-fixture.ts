// The documents of store-format.test.ts, one of each value type the wire carries, and the recorder of its
// fixture: a data file written by the launcher as it was before documents were stored as BSON (a9e02a0, Java
// serialisation). Recorded once, by hand, with that launcher:
//
//   git show a9e02a0:scripts/mongo/Launcher.java > /tmp/Launcher.java
//   npx tsx test/integration/store-format-fixture.ts /tmp/Launcher.java
//
// It writes test/integration/fixtures/mongo-java-serialised.mv.gz (a 1.8 MB file, 116 KB gzipped). Nothing
// records it again: it stands for the data files that stacks already have.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import {
  Binary,
  BSON,
  BSONRegExp,
  Code,
  Decimal128,
  Double,
  Int32,
  Long,
  MaxKey,
  MinKey,
  ObjectId,
  Timestamp,
  UUID,
  type Document,
} from 'mongodb';
import { ownMongo } from '../../testkit/own-mongo';

export const FIXTURE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'fixtures',
  'mongo-java-serialised.mv.gz',
);
export const DB = 'fixture';
export const COLLECTION = 'docs';

/**
 * The i32 of a document, from its _id. With _ids of different lengths and negative numbers, the order of the keys'
 * Java-serialised bytes (the old index order) is not their order by value: an index kept in the old order and
 * searched in the new one misses keys.
 */
export const i32Of = (id: string) => Number(id.slice(1)) - 150;

/** `n` documents, the same on every call: every BSON type mongo-java-server keeps, nested, and a large one. */
export function documents(n = 300, tag = 'v1'): ({ _id: string } & Document)[] {
  return Array.from({ length: n }, (_, i) => ({
    _id: `d${i}`,
    tag,
    i32: new Int32(i32Of(`d${i}`)),
    i64: Long.fromString(`${i}000000000123`),
    dbl: new Double(i + 0.25),
    whole: new Double(i),
    dec: Decimal128.fromString(`${i}.0100`),
    yes: i % 2 === 0,
    none: null,
    when: new Date(Date.UTC(2026, 10, 27, 12, 0, 0, i)),
    oid: new ObjectId(i.toString(16).padStart(24, '0')),
    bin: new Binary(Buffer.from([i & 255, 1, 2, 3]), 0),
    uuid: new UUID(`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`),
    ts: new Timestamp({ t: 1_700_000_000 + i, i: 7 }),
    re: new BSONRegExp(`^job-${i}`, 'i'),
    code: new Code(`function() { return ${i}; }`),
    min: new MinKey(),
    max: new MaxKey(),
    text: `état ${i} — 作业 ✓`,
    nested: { state: i % 3 ? 'FINISHED' : 'ERROR', list: [new Int32(1), 'two', { three: new Double(3) }], empty: {} },
    big: i % 100 === 0 ? 'x'.repeat(20_000) : '',
  }));
}

/** Exact form (types included): what a document read back must equal. */
export function canonical(docs: Document[]): string[] {
  return docs.map((d) => BSON.EJSON.stringify(d, { relaxed: false }));
}

/** Reads with every value in its own type (no promotion of Int32, Double or Long to number). */
export const EXACT = { promoteValues: false, promoteLongs: false } as const;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const launcher = process.argv[2];
  if (!launcher) throw new Error('usage: store-format-fixture.ts <Launcher.java of a9e02a0>');
  const cleanups: (() => Promise<void>)[] = [];
  const mongo = await ownMongo(cleanups, { launcher });
  const col = mongo.client.db(DB).collection<{ _id: string } & Document>(COLLECTION);
  await col.insertMany(documents());
  await col.createIndex({ tag: 1, i32: 1 }, { unique: true });
  await mongo.stop();
  writeFileSync(FIXTURE, gzipSync(readFileSync(mongo.file), { level: 9 }));
  for (const c of cleanups) await c();
  console.log(`wrote ${FIXTURE}`);
}
