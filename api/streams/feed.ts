// Change feeds: one MongoDB change stream per collection per API process, fanned out in memory to its
// subscribers. Event ids are change-stream resume tokens, so a client that comes back with the last id
// it saw gets a stream of its own resumed after it and misses nothing.
import type { ChangeStream, ChangeStreamDocument, Collection, Document } from 'mongodb';
import { logger } from '../../lib/log';
import { Collections, type Store } from '../../lib/mongo';
import { badRequest } from '../errors';
import { StreamLimits, type StreamLimitsConfig } from './limits';

const log = logger('streams');

export interface FeedEvent {
  id: string;
  doc: Document;
}

/** One collection's change stream and its subscribers. */
export class ChangeFeed {
  private stream?: ChangeStream;
  private readonly subscribers = new Set<(e: FeedEvent) => void>();
  /** The service's own listeners (metrics): fed like subscribers, not counted as clients. */
  private readonly observers = new Set<(e: FeedEvent) => void>();
  /** Clients resumed after a token, each on a change stream of its own. */
  private resumed = 0;
  private closed = false;
  /** The resume token of the last event the shared stream delivered: where a reopened stream goes on. */
  private lastToken?: unknown;

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
    const stream = this.open(this.lastToken);
    this.stream = stream;
    void this.pump(stream, (e) => {
      for (const s of this.subscribers) s(e);
      for (const o of this.observers) o(e);
    }).then((err) => {
      if (this.closed || this.stream !== stream) return;
      this.stream = undefined;
      if (isHistoryLost(err)) {
        // The server's oplog no longer reaches back to the last event seen: what happened in between is
        // gone from the stream (a subscriber re-reads the resource to catch up); the feed goes on from now.
        log.warn('change stream history lost; following from now', { collection: this.name });
        this.lastToken = undefined;
      } else {
        // Any other failure (the server restarted, the connection broke): reopen after a pause, resumed
        // after the last event delivered, so subscribers miss nothing across the gap.
        log.warn('change stream failed; reopening', { collection: this.name, err: String(err) });
      }
      setTimeout(() => this.start(), isHistoryLost(err) ? 0 : 1000);
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
        if (stream === this.stream) this.lastToken = change._id;
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

  /** Like subscribe, for the service itself: not counted among the clients. */
  observe(fn: (e: FeedEvent) => void): () => void {
    this.start();
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  /** Clients following this feed now (Socket.IO and SSE, resumed ones included). */
  get clientCount(): number {
    return this.subscribers.size + this.resumed;
  }

  /**
   * A stream of one client's own, resumed after a token it has seen (SSE Last-Event-ID). `ended` is told
   * when it stops by itself (it failed, e.g. the token is unknown, or the feed closed), not when unsubscribed.
   */
  resume(token: string, fn: (e: FeedEvent) => void, ended?: (err?: unknown) => void): () => void {
    let resumeAfter: unknown;
    try {
      resumeAfter = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    } catch {
      throw badRequest('Last-Event-ID is not an event id of this stream');
    }
    const stream = this.open(resumeAfter);
    this.resumed++;
    let open = true;
    void this.pump(stream, fn).then((err) => {
      if (err) log.warn('resumed change stream failed', { collection: this.name, err: String(err) });
      if (open) ended?.(err);
    });
    return () => {
      if (open) this.resumed--;
      open = false;
      void stream.close().catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    this.observers.clear();
    await this.stream?.close().catch(() => undefined);
  }
}

/** MongoDB's ChangeStreamHistoryLost: a resume token older than the server's oplog window. */
const isHistoryLost = (err: unknown): boolean => (err as { code?: number } | undefined)?.code === 286;

function toEvent(c: ChangeStreamDocument): FeedEvent | undefined {
  if (!('fullDocument' in c) || !c.fullDocument) return undefined;
  return { id: Buffer.from(JSON.stringify(c._id)).toString('base64url'), doc: c.fullDocument };
}

export interface Feeds {
  jobs: ChangeFeed;
  results: ChangeFeed;
  sqlHistory: ChangeFeed;
  /** Resumed streams per principal and unread bytes per client, for both transports. */
  limits: StreamLimits;
  close(): Promise<void>;
}

export function createFeeds(store: Store, limits?: StreamLimitsConfig): Feeds {
  const jobs = new ChangeFeed(store.col(Collections.jobs), 'jobs');
  const results = new ChangeFeed(store.col(Collections.results), 'results');
  const sqlHistory = new ChangeFeed(store.col(Collections.sqlHistory), 'sqlHistory');
  const all = [jobs, results, sqlHistory];
  return {
    jobs,
    results,
    sqlHistory,
    limits: new StreamLimits(limits),
    close: async () => void (await Promise.all(all.map((f) => f.close()))),
  };
}
