// Change streams (spec §6, API.md "Streams"): one MongoDB change stream per collection per API process,
// fanned out in memory to subscribers with their filters, over two transports: Server-Sent Events and
// Socket.IO namespaces. SSE event ids are change-stream resume tokens: a client that reconnects with
// Last-Event-ID gets its own stream resumed after that token, so it misses nothing.
import type { Context } from 'koa';
import type { ChangeStream, ChangeStreamDocument, Collection, Document } from 'mongodb';
import type http from 'node:http';
import { PassThrough } from 'node:stream';
import { Server as SocketServer } from 'socket.io';
import { parseTags } from '../domain/delimited';
import { logger } from '../lib/log';
import { Collections, type Store } from '../lib/mongo';
import { badRequest } from './errors';
import { arrayParam } from './list';
import { route } from './routing';
import { toResult } from './routes/groups';
import { toJob } from './routes/jobs';

const log = logger('streams');

type Query = Record<string, string | string[] | undefined>;
export type Predicate = (doc: Document) => boolean;

/** Filters of §4.9 and §4.20: every given filter must match; within one filter any value matches. */
export function streamFilter(q: Query): Predicate {
  const jobIds = arrayParam(q, 'jobIds');
  const groupIds = arrayParam(q, 'groupIds');
  const clusterNames = arrayParam(q, 'clusterNames');
  const groupNames = arrayParam(q, 'groupNames');
  const tags = parseTags('tags', typeof q.tags === 'string' ? q.tags : undefined);
  const inList = (list: string[] | undefined, v: unknown) => !list?.length || list.includes(String(v));
  return (d) =>
    inList(jobIds, d.jobId) &&
    inList(groupIds, d.groupId) &&
    inList(clusterNames, d.clusterName) &&
    inList(groupNames, d.groupName) &&
    Object.entries(tags).every(([k, v]) => (d.tagMap as Record<string, string> | undefined)?.[k] === v);
}

export interface FeedEvent {
  id: string;
  doc: Document;
}

/** One collection's change stream and its subscribers. */
export class ChangeFeed {
  private stream?: ChangeStream;
  private readonly subscribers = new Set<(e: FeedEvent) => void>();
  private closed = false;

  constructor(
    private readonly col: Collection,
    readonly name: string,
    /** Pause between empty polls (see pump). */
    private readonly idleMs = 20,
  ) {}

  private open(resumeAfter?: unknown): ChangeStream {
    return this.col.watch([{ $match: { operationType: { $in: ['insert', 'update', 'replace'] } } }], {
      fullDocument: 'updateLookup',
      maxAwaitTimeMS: 1000,
      ...(resumeAfter ? { resumeAfter } : {}),
    });
  }

  start(): void {
    if (this.stream || this.closed) return;
    const stream = this.open();
    this.stream = stream;
    void this.pump(stream, (e) => {
      for (const s of this.subscribers) s(e);
    }).then((err) => {
      if (this.closed || this.stream !== stream) return;
      // The driver resumes by itself on resumable errors; anything else: reopen after a pause.
      log.warn('change stream failed; reopening', { collection: this.name, err: String(err) });
      this.stream = undefined;
      setTimeout(() => this.start(), 1000);
    });
  }

  /**
   * Reads a change stream until it is closed (resolves undefined) or fails (resolves the error).
   * Pulls with tryNext() and pauses when nothing is there: a real MongoDB holds each getMore open up to
   * maxAwaitTimeMS, but mongo-java-server answers at once, and the driver's own loop would then spin.
   */
  private async pump(stream: ChangeStream, emit: (e: FeedEvent) => void): Promise<unknown> {
    while (!stream.closed && !this.closed) {
      let change: ChangeStreamDocument | null;
      try {
        change = await stream.tryNext();
      } catch (err) {
        return stream.closed || this.closed ? undefined : err;
      }
      if (change) {
        const e = toEvent(change);
        if (e) emit(e);
      } else {
        await new Promise((r) => setTimeout(r, this.idleMs));
      }
    }
    return undefined;
  }

  subscribe(fn: (e: FeedEvent) => void): () => void {
    this.start();
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /** A stream of one client's own, resumed after a token it has seen (SSE Last-Event-ID). */
  resume(token: string, fn: (e: FeedEvent) => void): () => void {
    let resumeAfter: unknown;
    try {
      resumeAfter = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    } catch {
      throw badRequest('Last-Event-ID is not an event id of this stream');
    }
    const stream = this.open(resumeAfter);
    void this.pump(stream, fn).then((err) => {
      if (err) log.warn('resumed change stream failed', { collection: this.name, err: String(err) });
    });
    return () => void stream.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    await this.stream?.close().catch(() => undefined);
  }
}

function toEvent(c: ChangeStreamDocument): FeedEvent | undefined {
  if (!('fullDocument' in c) || !c.fullDocument) return undefined;
  return { id: Buffer.from(JSON.stringify(c._id)).toString('base64url'), doc: c.fullDocument };
}


export interface Feeds {
  jobs: ChangeFeed;
  results: ChangeFeed;
  close(): Promise<void>;
}

export function createFeeds(store: Store): Feeds {
  const jobs = new ChangeFeed(store.col(Collections.jobs), 'jobs');
  const results = new ChangeFeed(store.col(Collections.results), 'results');
  return { jobs, results, close: async () => void (await Promise.all([jobs.close(), results.close()])) };
}

const STREAMS = [
  { path: '/job/updates', namespace: '/jobs', event: 'job', feed: 'jobs', render: toJob, what: 'Stream of job changes (4.20)' },
  {
    path: '/group/job/result/updates',
    namespace: '/group-job-results',
    event: 'jobInstanceResult',
    feed: 'results',
    render: toResult,
    what: 'Stream of interactive job result changes (4.9)',
  },
] as const;

const FILTER_QUERY = [
  { name: 'jobIds', description: 'job ids', array: true },
  { name: 'groupIds', description: 'group ids', array: true },
  { name: 'clusterNames', description: 'cluster names', array: true },
  { name: 'groupNames', description: 'group names (result stream)', array: true },
  { name: 'tags', description: 'key1=value1;key2=value2' },
];

/** SSE endpoints. Each event: `id: <resume token>`, `event: job|jobInstanceResult`, `data: <resource JSON>`. */
export const streamRoutes = (feeds: Feeds) =>
  STREAMS.map((s) =>
    route({
      method: 'get',
      path: s.path,
      tag: 'streams',
      summary: `${s.what}, as Server-Sent Events (also Socket.IO namespace ${s.namespace}, event '${s.event}')`,
      query: FILTER_QUERY,
      errors: [400, 409],
      handler: async ({ ctx, query }) => sse(ctx, feeds[s.feed], streamFilter(query), s.event, s.render),
    }),
  );

function sse(ctx: Context, feed: ChangeFeed, match: Predicate, event: string, render: (d: Document) => unknown): void {
  const body = new PassThrough();
  const send = (e: FeedEvent) => {
    if (match(e.doc)) body.write(`id: ${e.id}\nevent: ${event}\ndata: ${JSON.stringify(render(e.doc))}\n\n`);
  };
  const lastId = ctx.get('Last-Event-ID');
  const unsubscribe = lastId ? feed.resume(lastId, send) : feed.subscribe(send);
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  ctx.status = 200;
  ctx.body = body;
  body.write(': connected\n\n');
  const ping = setInterval(() => body.write(': ping\n\n'), 15_000);
  const close = () => {
    clearInterval(ping);
    unsubscribe();
    body.end();
  };
  ctx.req.on('close', close);
}

/** Socket.IO namespaces over the same feeds; filters come from the handshake query. */
export function attachSocketIo(server: http.Server, feeds: Feeds): SocketServer {
  const io = new SocketServer(server, { cors: { origin: '*' }, serveClient: false });
  for (const s of STREAMS) {
    io.of(s.namespace).on('connection', (socket) => {
      let match: Predicate;
      try {
        match = streamFilter(socket.handshake.query as Query);
      } catch (e) {
        socket.emit('error', { message: (e as Error).message });
        socket.disconnect(true);
        return;
      }
      const unsubscribe = feeds[s.feed].subscribe((e) => {
        if (match(e.doc)) socket.emit(s.event, s.render(e.doc));
      });
      socket.on('disconnect', unsubscribe);
    });
  }
  return io;
}
