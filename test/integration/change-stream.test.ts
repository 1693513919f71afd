// The change streams under every job, result and SQL history stream: the MongoDB-protocol server's oplog
// (scripts/mongo/Launcher.java) and the API's ChangeFeed (api/streams/feed.ts). Subscribers are promised
// every state in order, across a restart of the server, and a clear answer when history is gone.
import { statSync } from 'node:fs';
import path from 'node:path';
import { MongoClient, type Document } from 'mongodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ChangeFeed, FeedHub, type FeedEvent } from '../../api/streams/feed';
import { Collections } from '../../lib/mongo';
import { eventually } from '../harness';
import { startStack } from '../../testkit/stack';
import { ownMongo } from '../../testkit/own-mongo';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface SseEvent {
  id?: string;
  data: { jobId: string; state: string };
}

/** An SSE response read as it comes: its events (`id` absent when the event has none) and comment lines. */
function openSse(url: string, headers: Record<string, string> = {}) {
  const ctrl = new AbortController();
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const status = fetch(url, { headers, signal: ctrl.signal }).then(async (res) => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data) events.push({ ...(id ? { id } : {}), data: JSON.parse(data) as SseEvent['data'] });
          else if (block.startsWith(':')) comments.push(block.slice(1).trim());
        }
      }
    })();
    return res.status;
  });
  return { events, comments, status, close: () => ctrl.abort() };
}

const states = (events: FeedEvent[], id: string) => events.filter((e) => e.doc._id === id).map((e) => e.doc.state);

describe('change streams', () => {
  it('carry every replacement of a document as it was written, in order, however close together', async () => {
    const client = await MongoClient.connect(inject('mongoUrl'));
    cleanups.push(() => client.close());
    const col = client.db('change-stream-test').collection<Document>('jobs');
    const feed = new ChangeFeed(col, 'jobs');
    cleanups.push(() => feed.close());
    const seen: FeedEvent[] = [];
    feed.subscribe((e) => seen.push(e));
    await new Promise((r) => setTimeout(r, 300));

    // Ten states of one record written back to back, as a job's projection writes them (whole-document
    // replaces): a poll finds several at once. Each event must carry its own state, not the latest one.
    const written = Array.from({ length: 10 }, (_, i) => `S${i}`);
    for (const [version, state] of written.entries())
      await col.replaceOne(
        { _id: 'job-1', version: { $lt: version + 1 } } as Document,
        { state, version: version + 1 },
        {
          upsert: true,
        },
      );
    await eventually(async () => (states(seen, 'job-1').length >= 10 ? true : undefined), 10_000, 50);
    expect(states(seen, 'job-1')).toEqual(written);
  });

  it("share one database-wide stream between feeds, each getting its own collection's events", async () => {
    const client = await MongoClient.connect(inject('mongoUrl'));
    cleanups.push(() => client.close());
    const db = client.db('change-stream-hub');
    const hub = new FeedHub(db);
    cleanups.push(() => hub.close());
    const a = new ChangeFeed(db.collection('a'), 'a', hub);
    const b = new ChangeFeed(db.collection('b'), 'b', hub);
    const seenA: FeedEvent[] = [];
    const seenB: FeedEvent[] = [];
    a.subscribe((e) => seenA.push(e));
    b.subscribe((e) => seenB.push(e));
    await new Promise((r) => setTimeout(r, 300));
    await db.collection('a').insertOne({ _id: 'x', state: 'A1' } as Document);
    await db.collection('other').insertOne({ _id: 'x', state: 'OTHER' } as Document);
    await db.collection('b').insertOne({ _id: 'x', state: 'B1' } as Document);
    await db.collection('a').replaceOne({ _id: 'x' } as Document, { state: 'A2' });
    await eventually(async () => (seenA.length >= 2 && seenB.length >= 1 ? true : undefined), 10_000, 50);
    await new Promise((r) => setTimeout(r, 200));
    expect(states(seenA, 'x')).toEqual(['A1', 'A2']);
    expect(states(seenB, 'x')).toEqual(['B1']);
  });

  it('hold an idle getMore on the server until a write (awaitData): idle, a hub asks about once a second, and a write wakes the request already waiting', async () => {
    const client = await MongoClient.connect(inject('mongoUrl'), { monitorCommands: true });
    cleanups.push(() => client.close());
    const started = new Map<number, number>();
    const carriers: number[] = []; // when each getMore that brought events was sent
    client.on('commandStarted', (e) => {
      if (e.commandName === 'getMore') started.set(e.requestId, performance.now());
    });
    client.on('commandSucceeded', (e) => {
      const batch = (e.reply as { cursor?: { nextBatch?: unknown[] } }).cursor?.nextBatch;
      if (e.commandName === 'getMore' && batch?.length) carriers.push(started.get(e.requestId)!);
    });
    const db = client.db('change-stream-await');
    const hub = new FeedHub(db);
    cleanups.push(() => hub.close());
    const feed = new ChangeFeed(db.collection('jobs'), 'jobs', hub);
    const seen: FeedEvent[] = [];
    feed.subscribe((e) => seen.push(e));
    await new Promise((r) => setTimeout(r, 500));

    // Idle: a server that answered at once would see a getMore every 20 ms (about 125 in 2.5 s). Writes to
    // another database (other test files share this server) do not wake it either: about 50 of them here.
    const before = started.size;
    const elsewhere = client.db('change-stream-await-elsewhere').collection('jobs');
    const until = Date.now() + 2_500;
    for (let i = 0; Date.now() < until; i++) {
      await elsewhere.insertOne({ _id: i } as Document);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(started.size - before).toBeLessThanOrEqual(5);

    // A write reaches the subscriber through the getMore that was already waiting on the server.
    // (A write to another collection wakes it too; it answers empty and the next one waits again.)
    await db.collection('other').insertOne({ _id: 'skip' } as Document);
    await new Promise((r) => setTimeout(r, 300));
    const written = performance.now();
    await db.collection('jobs').insertOne({ _id: 'x', state: 'SUBMITTED' } as Document);
    await eventually(async () => (seen.length ? true : undefined), 10_000, 10);
    expect(states(seen, 'x')).toEqual(['SUBMITTED']);
    expect(carriers.length).toBeGreaterThan(0);
    expect(Math.min(...carriers)).toBeLessThan(written);
  });

  it('go on after the last event delivered when the server restarts: nothing written meanwhile is missed', async () => {
    const mongo = await ownMongo(cleanups);
    const col = mongo.client.db('t').collection<Document>('jobs');
    const feed = new ChangeFeed(col, 'jobs');
    cleanups.push(() => feed.close());
    const seen: FeedEvent[] = [];
    feed.subscribe((e) => seen.push(e));
    await new Promise((r) => setTimeout(r, 300));

    await col.insertOne({ _id: 'a', state: 'BEFORE' } as Document);
    await eventually(async () => (states(seen, 'a').length === 1 ? true : undefined), 10_000, 50);
    await mongo.kill();
    await mongo.start();
    // Written as soon as the server is back, before the feed has reopened its stream (it waits a second).
    await col.replaceOne({ _id: 'a' } as Document, { state: 'AFTER-1' });
    await col.replaceOne({ _id: 'a' } as Document, { state: 'AFTER-2' });
    await eventually(async () => (states(seen, 'a').length >= 3 ? true : undefined), 30_000, 100);
    expect(states(seen, 'a')).toEqual(['BEFORE', 'AFTER-1', 'AFTER-2']);
  });

  it('keep every acknowledged write across a kill -9 of the server, the last one included', async () => {
    const mongo = await ownMongo(cleanups);
    const col = mongo.client.db('t').collection<Document>('acked');
    // Back to back: the last ones were acknowledged within the same millisecond or two as the kill.
    for (let i = 0; i < 200; i++) await col.replaceOne({ _id: `w${i}` } as Document, { i }, { upsert: true });
    await mongo.kill();
    await mongo.start();
    expect(await col.countDocuments()).toBe(200);
    expect(await col.findOne({ _id: 'w199' } as Document)).toMatchObject({ i: 199 });
  });

  it('answer ChangeStreamHistoryLost (286) for a resume token older than the trimmed oplog', async () => {
    const mongo = await ownMongo(cleanups, { env: { OPLOG_MAX_ENTRIES: '100' } });
    const col = mongo.client.db('t').collection<Document>('jobs');
    const stream = col.watch([], {});
    await stream.tryNext();
    await col.insertOne({ _id: 'first' } as Document);
    const first = await eventually(async () => (await stream.tryNext()) ?? undefined, 10_000, 20);
    await stream.close();
    // A fresh token still resumes.
    const near = col.watch([], { resumeAfter: first._id });
    await col.insertOne({ _id: 'second' } as Document);
    const next = await eventually(async () => (await near.tryNext()) ?? undefined, 10_000, 20);
    expect((next as { documentKey?: unknown }).documentKey).toEqual({ _id: 'second' });
    await near.close();
    // 600 writes later the oplog keeps its last 100 or so entries: the first token is past the window.
    await col.insertMany(Array.from({ length: 600 }, (_, i) => ({ n: i })));
    const far = col.watch([], { resumeAfter: first._id });
    await expect(far.tryNext()).rejects.toMatchObject({ code: 286 });
    await far.close().catch(() => undefined);
  });

  it('answer an SSE resume older than the oplog window with a full re-read: every matching record as it is, then live changes', async () => {
    const mongo = await ownMongo(cleanups, { env: { OPLOG_MAX_ENTRIES: '100' } });
    const dir = path.join(mongo.dir, 'stack');
    const stack = await startStack({
      temporalAddress: inject('temporalAddress'),
      mongoUrl: mongo.url,
      dir,
      id: 'reread',
      prefix: 'test',
      worker: 'none',
      env: { LOG_LEVEL: 'warn' },
    });
    cleanups.push(() => stack.stop());
    const jobs = stack.store.col(Collections.jobs);
    const job = (jobId: string, state: string) => ({
      jobId,
      state,
      jobType: 'SINGLE',
      clusterName: 'default',
      submitTime: Date.now(),
    });
    const stream = `${stack.url}/job/updates?jobIds=a,b`;

    // A client sees a's first state, then goes away.
    const first = openSse(stream);
    expect(await first.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    await jobs.insertOne({ _id: 'a', ...job('a', 'A1') } as Document);
    await eventually(async () => (first.events.length ? true : undefined), 10_000, 20);
    first.close();
    const lastId = first.events[0].id!;
    expect(lastId).toBeTruthy();

    // Meanwhile a moves on, b appears, c (not asked for) too, and 600 other writes push a's event out of the oplog.
    await jobs.replaceOne({ _id: 'a' } as Document, job('a', 'A2'));
    await jobs.insertOne({ _id: 'b', ...job('b', 'B1') } as Document);
    await jobs.insertOne({ _id: 'c', ...job('c', 'C1') } as Document);
    await jobs.insertMany(Array.from({ length: 600 }, (_, i) => ({ _id: `x${i}`, ...job(`x${i}`, 'X') }) as Document));

    // Resumed with its old id: the current state of a and b (nothing else), without ids, then live changes.
    const back = openSse(stream, { 'Last-Event-ID': lastId });
    expect(await back.status).toBe(200);
    await eventually(async () => (back.events.length >= 2 ? true : undefined), 15_000, 20);
    expect(back.comments.some((c) => /older than the change history/.test(c))).toBe(true);
    expect(back.events.map((e) => `${e.data.jobId}:${e.data.state}`).sort()).toEqual(['a:A2', 'b:B1']);
    expect(back.events.every((e) => e.id === undefined)).toBe(true);
    await jobs.replaceOne({ _id: 'b' } as Document, job('b', 'B2'));
    await jobs.replaceOne({ _id: 'c' } as Document, job('c', 'C2'));
    await eventually(async () => (back.events.length >= 3 ? true : undefined), 15_000, 20);
    await new Promise((r) => setTimeout(r, 300));
    expect(back.events.slice(2).map((e) => `${e.data.jobId}:${e.data.state}`)).toEqual(['b:B2']);
    const liveId = back.events[2].id!;
    expect(liveId).toBeTruthy();
    back.close();

    // The live event's id resumes as usual: only what came after it.
    await jobs.replaceOne({ _id: 'a' } as Document, job('a', 'A3'));
    const again = openSse(stream, { 'Last-Event-ID': liveId });
    expect(await again.status).toBe(200);
    await eventually(async () => (again.events.length >= 1 ? true : undefined), 15_000, 20);
    await new Promise((r) => setTimeout(r, 300));
    again.close();
    expect(again.events.map((e) => `${e.data.jobId}:${e.data.state}`)).toEqual(['a:A3']);
    expect(again.comments.some((c) => /older than the change history/.test(c))).toBe(false);
  });

  it("keep the server's data file compact: bounded under writes, shrunk once quiet, intact across a restart", async () => {
    const mongo = await ownMongo(cleanups, {
      env: { OPLOG_MAX_ENTRIES: '1000', MVSTORE_COMPACT_INTERVAL_SECONDS: '1' },
    });
    const file = path.join(mongo.dir, 'mongo.mv');
    const mb = () => statSync(file).size / 2 ** 20;
    const col = mongo.client.db('t').collection<Document>('jobs');
    // 20,000 whole-document replaces over 500 records of ~1 KB: under 2 MB live, the oplog included.
    let peak = 0;
    for (let round = 0; round < 40; round++) {
      await col.bulkWrite(
        Array.from({ length: 500 }, (_, i) => ({
          replaceOne: {
            filter: { _id: `j${i}` } as Document,
            replacement: { state: `S${round}`, padding: 'x'.repeat(1000) },
            upsert: true,
          },
        })),
      );
      peak = Math.max(peak, mb());
    }
    // With MVStore's default retention (45 s) every chunk of the run stayed: this reached 310 MB.
    expect(peak).toBeLessThan(200);
    const quiet = await eventually(async () => (mb() < 8 ? mb() : undefined), 60_000, 500);
    expect(quiet).toBeLessThan(8);
    console.log(`data file: ${peak.toFixed(1)} MB at most while written, ${quiet.toFixed(1)} MB once quiet`);
    await mongo.kill();
    await mongo.start();
    expect(await col.countDocuments()).toBe(500);
    expect((await col.findOne({ _id: 'j499' } as Document))?.state).toBe('S39');
  });
});
