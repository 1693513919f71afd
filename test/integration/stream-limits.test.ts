// Stream limits through the real API and MongoDB change streams, with authentication on: a principal may hold
// only STREAM_RESUMED_PER_PRINCIPAL resumed SSE streams at once (the next answers 429; another principal has
// its own; one given back when its client goes), and a client that does not read, over SSE or Socket.IO
// (long-polling that never polls), is disconnected once STREAM_MAX_BUFFERED_BYTES wait unsent for it, while
// clients that read get every event.
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import { io as ioClient } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Collections } from '../../lib/mongo';
import { metricSum, parseMetrics } from '../../testkit/metrics';
import { call, eventually, startHarness, type Harness } from '../harness';

const ADMIN_KEY = `test-admin-${randomBytes(24).toString('hex')}`;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const MAX_RESUMED = 2;
const MAX_BUFFERED = 1_048_576;

let h: Harness;
let viewer: { keyId: string; key: string };
const origin = () => h.url.replace(/\/api\/v1$/, '');

beforeAll(async () => {
  h = await startHarness({
    worker: false,
    env: {
      AUTH_MODE: 'on',
      AUTH_ADMIN_KEY: ADMIN_KEY,
      STREAM_RESUMED_PER_PRINCIPAL: String(MAX_RESUMED),
      STREAM_MAX_BUFFERED_BYTES: String(MAX_BUFFERED),
    },
  });
  const r = await call(h, 'POST', '/auth/keys', { name: 'watcher', role: 'viewer' }, bearer(ADMIN_KEY));
  expect(r.status).toBe(200);
  viewer = r.body;
});
afterAll(async () => h?.stop());

const metrics = async () => {
  const res = await fetch(`${origin()}/metrics`, { headers: bearer(ADMIN_KEY) });
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
};
const resultSubscribers = async () => metricSum(await metrics(), 'spark_stream_subscribers', { feed: 'results' });

const resultsPath = (groupId: string) => `/group/job/result/updates?groupIds=${groupId}`;

/** Opens an SSE stream; the caller reads it through `events` and ends it with `abort`. */
async function openSse(path: string, headers: Record<string, string>) {
  const ctl = new AbortController();
  const res = await fetch(h.url + path, { headers, signal: ctl.signal });
  const events: { id: string; data: any }[] = [];
  const reading = (async () => {
    if (res.status !== 200 || !res.body) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id && data) events.push({ id, data: JSON.parse(data) });
        }
      }
    } catch {
      // aborted
    }
  })();
  return { res, events, abort: () => ctl.abort(), reading };
}

const result = (groupId: string, size = 64) => ({
  _id: randomUUID(),
  jobInstanceId: randomUUID(),
  groupId,
  startTime: Date.now(),
  jobConfig: {},
  result: 'x'.repeat(size),
});

describe('resumed SSE streams per principal', () => {
  it('answers 429 beyond the limit, counts each principal apart, and gives a stream back when its client goes', async () => {
    const group = `g-resume-${randomUUID().slice(0, 8)}`;
    const first = await openSse(resultsPath(group), bearer(ADMIN_KEY));
    expect(first.res.status).toBe(200);
    await h.store.col(Collections.results).insertOne(result(group) as never);
    const lastId = (await eventually(async () => first.events[0]))!.id;
    first.abort();

    const resumed = (key: string) => openSse(resultsPath(group), { ...bearer(key), 'Last-Event-ID': lastId });
    const held = [await resumed(ADMIN_KEY), await resumed(ADMIN_KEY)];
    expect(held.map((s) => s.res.status)).toEqual([200, 200]);
    const refused = await fetch(h.url + resultsPath(group), {
      headers: { ...bearer(ADMIN_KEY), 'Last-Event-ID': lastId },
    });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /too many resumed streams: key:bootstrap has 2 open/,
    );
    // A stream that does not resume is not limited; nor is another principal.
    const live = await openSse(resultsPath(group), bearer(ADMIN_KEY));
    expect(live.res.status).toBe(200);
    const other = await resumed(viewer.key);
    expect(other.res.status).toBe(200);
    expect(metricSum(await metrics(), 'spark_stream_resumes_refused_total')).toBeGreaterThanOrEqual(1);

    // The resumed streams deliver what follows, and one whose client goes is given back.
    await h.store.col(Collections.results).insertOne(result(group) as never);
    await eventually(async () => held.every((s) => s.events.length >= 1) && other.events.length >= 1, 20_000);
    held[0].abort();
    const again = await eventually(async () => {
      const s = await resumed(ADMIN_KEY);
      if (s.res.status === 200) return s;
      await s.res.body?.cancel();
      return undefined;
    }, 10_000);
    for (const s of [held[1], live, other, again]) s.abort();
    // Every stream, resumed or not, ends with its client.
    await eventually(async () => (await resultSubscribers()) === 0, 10_000);
  });
});

describe('clients that do not read', () => {
  it('are disconnected over SSE and Socket.IO once their backlog passes the bound; readers get every event', async () => {
    const group = `g-slow-${randomUUID().slice(0, 8)}`;
    const host = new URL(h.url).host;
    const before = await metrics();
    const droppedBefore = (transport: string) => metricSum(before, 'spark_stream_clients_dropped_total', { transport });

    // An SSE client that reads its response's head, then nothing.
    const stalled = net.connect(Number(new URL(h.url).port), '127.0.0.1');
    let stalledClosed = false;
    stalled.on('close', () => (stalledClosed = true));
    stalled.on('error', () => undefined);
    const head = new Promise<string>((resolve) => stalled.once('data', (d) => resolve(String(d))));
    stalled.write(
      `GET /api/v1${resultsPath(group)} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n\r\n`,
    );
    expect(await head).toMatch(/^HTTP\/1\.1 200/);
    stalled.pause();

    // A Socket.IO client on long-polling that joins the namespace and never polls again.
    const handshake = await fetch(`${origin()}/socket.io/?EIO=4&transport=polling&groupIds=${group}`);
    expect(handshake.status).toBe(200);
    const sid = (JSON.parse((await handshake.text()).slice(1)) as { sid: string }).sid;
    const joined = await fetch(`${origin()}/socket.io/?EIO=4&transport=polling&sid=${sid}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
      body: `40/group-job-results,${JSON.stringify({ token: ADMIN_KEY })}`,
    });
    expect(joined.status).toBe(200);

    // Clients that read: SSE and Socket.IO over WebSocket.
    const reader = await openSse(resultsPath(group), bearer(viewer.key));
    expect(reader.res.status).toBe(200);
    const socketEvents: unknown[] = [];
    const socket = ioClient(`${origin()}/group-job-results`, {
      transports: ['websocket'],
      auth: { token: viewer.key },
      query: { groupIds: group },
      reconnection: false,
    });
    socket.on('jobInstanceResult', (r) => socketEvents.push(r));
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    await eventually(async () => (await resultSubscribers()) >= 4, 10_000);

    // Far more than the kernel's socket buffers and the bound hold: 48 results of 256 KiB.
    const COUNT = 48;
    // One at a time, each read by the readers before the next: the readers share this process with the API,
    // and a burst written faster than they can read would leave them behind the bound too.
    for (let i = 0; i < COUNT; i++) {
      await h.store.col(Collections.results).insertOne(result(group, 262_144) as never);
      await eventually(async () => reader.events.length > i && socketEvents.length > i, 20_000, 10);
    }

    await eventually(async () => {
      const m = await metrics();
      return metricSum(m, 'spark_stream_clients_dropped_total', { transport: 'sse' }) > droppedBefore('sse') &&
        metricSum(m, 'spark_stream_clients_dropped_total', { transport: 'socketio' }) > droppedBefore('socketio')
        ? true
        : undefined;
    }, 30_000);
    await eventually(async () => reader.events.length === COUNT && socketEvents.length === COUNT, 30_000);
    // Only the two readers are left subscribed.
    await eventually(async () => (await resultSubscribers()) === 2, 10_000);
    // The polling session is gone from the server: a poll for it is refused.
    const poll = await fetch(`${origin()}/socket.io/?EIO=4&transport=polling&sid=${sid}`);
    expect(poll.status).toBe(400);
    stalled.resume();
    await eventually(async () => stalledClosed, 10_000);

    socket.close();
    reader.abort();
    stalled.destroy();
  });
});
