// Change feeds: one MongoDB change stream over the database per API process (FeedHub), fanned out in memory
// to each collection's subscribers. Event ids are change-stream resume tokens, so a client that comes back with the last id
// it saw gets a stream of its own resumed after it and misses nothing.
import type { ChangeStream, ChangeStreamDocument, Collection, Db, Document } from 'mongodb';
import { logger } from '../../lib/log';
import { Collections, type Store } from '../../lib/mongo';
import { badRequest } from '../errors';
import { StreamLimits, type StreamLimitsConfig } from './limits';

const log = logger('streams');

export interface FeedEvent {
  /** The change's resume token (base64url); empty for a record sent by a re-read. */
  id: string;
  doc: Document;
}

export interface ResumeOptions {
  /** Told when the resumed stream stops by itself: it failed, or the feed closed (not when unsubscribed). */
  ended?: (err?: unknown) => void;
  /** Told when the token is past the change history and the collection is re-read instead. */
  reread?: () => void;
  /** Awaited after each record of a re-read: resolves when the client can take more. */
  drain?: () => Promise<void>;
}

const WATCHED = { $in: ['insert', 'update', 'replace'] };

/**
 * Reads a change stream until it is closed (resolves undefined) or fails (resolves the error).
 * Each tryNext() is one getMore, which the server holds until a change arrives or maxAwaitTimeMS passes
 * (MongoDB does; so does the dev server's launcher, scripts/mongo/Launcher.java, AwaitData): idle, that is one
 * request a second, and a change is delivered as soon as it is written. A server that answers an empty getMore
 * at once would make this loop spin, so an empty answer that came back in under `idleMs` waits out the rest.
 */
async function pump(
  stream: ChangeStream,
  stopped: () => boolean,
  idleMs: number,
  emit: (c: ChangeStreamDocument) => void,
): Promise<unknown> {
  while (!stream.closed && !stopped()) {
    let change: ChangeStreamDocument | null;
    const asked = performance.now();
    try {
      change = await stream.tryNext();
    } catch (err) {
      // The driver closes a stream on an error it cannot resume from: that error is still the answer
      // (ChangeStreamHistoryLost among them), unless this side stopped it.
      return stopped() ? undefined : err;
    }
    if (change) emit(change);
    else {
      const rest = idleMs - (performance.now() - asked);
      if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    }
  }
  return undefined;
}

/**
 * The one change stream an API process keeps open for its feeds: over the database, its events told apart by
 * collection (`ns.coll`), so one held getMore serves every feed (three feeds on their own would be three
 * requests). A feed made alone watches its collection the same way. A stream that fails is reopened after the
 * last event it delivered.
 */
export class FeedHub {
  private stream?: ChangeStream;
  private closed = false;
  /** The resume token of the last event delivered: where a reopened stream goes on. */
  private lastToken?: unknown;
  private readonly feeds = new Map<string, (c: ChangeStreamDocument) => void>();

  constructor(
    private readonly source: Db | Collection,
    /** The least time between two empty polls (a server that does not hold them). */
    private readonly idleMs = 20,
  ) {}

  /** A feed of one collection: its events go to `deliver`. */
  attach(collection: string, deliver: (c: ChangeStreamDocument) => void): void {
    this.feeds.set(collection, deliver);
  }

  private open(): ChangeStream {
    const match: Document = { operationType: WATCHED };
    if (!('collectionName' in this.source)) match['ns.coll'] = { $in: [...this.feeds.keys()] };
    return this.source.watch([{ $match: match }], {
      fullDocument: 'updateLookup',
      maxAwaitTimeMS: 1000,
      ...(this.lastToken ? { resumeAfter: this.lastToken } : {}),
    });
  }

  start(): void {
    if (this.stream || this.closed) return;
    const stream = this.open();
    this.stream = stream;
    const single = 'collectionName' in this.source ? [...this.feeds.values()][0] : undefined;
    void pump(
      stream,
      () => this.closed,
      this.idleMs,
      (c) => {
        if (stream !== this.stream) return;
        this.lastToken = c._id;
        const deliver = single ?? this.feeds.get((c as { ns?: { coll?: string } }).ns?.coll ?? '');
        deliver?.(c);
      },
    ).then((err) => {
      if (this.closed || this.stream !== stream) return;
      this.stream = undefined;
      if (isHistoryLost(err)) {
        // The server's oplog no longer reaches back to the last event seen: what happened in between is
        // gone from the stream (a subscriber re-reads the resource to catch up); the feeds go on from now.
        log.warn('change stream history lost; following from now');
        this.lastToken = undefined;
      } else {
        // Any other failure (the server restarted, the connection broke): reopen after a pause, resumed
        // after the last event delivered, so subscribers miss nothing across the gap.
        log.warn('change stream failed; reopening', { err: String(err) });
      }
      setTimeout(() => this.start(), isHistoryLost(err) ? 0 : 1000);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stream?.close().catch(() => undefined);
  }
}

/** One collection's changes and their subscribers, fed by a hub's stream. */
export class ChangeFeed {
  private readonly subscribers = new Set<(e: FeedEvent) => void>();
  /** The service's own listeners (metrics): fed like subscribers, not counted as clients. */
  private readonly observers = new Set<(e: FeedEvent) => void>();
  /** Clients resumed after a token, each on a change stream of its own. */
  private resumed = 0;
  private closed = false;
  private readonly hub: FeedHub;
  private readonly ownHub: boolean;

  constructor(
    private readonly col: Collection,
    readonly name: string,
    /** The process's shared stream; without one, the feed watches its collection alone. */
    hub?: FeedHub,
    /** The least time between two empty polls of resumed streams. */
    private readonly idleMs = 20,
  ) {
    this.ownHub = !hub;
    this.hub = hub ?? new FeedHub(col, idleMs);
    this.hub.attach(col.collectionName, (c) => {
      const e = toEvent(c);
      if (!e) return;
      for (const s of this.subscribers) s(e);
      for (const o of this.observers) o(e);
    });
  }

  private open(resumeAfter: unknown): ChangeStream {
    return this.col.watch([{ $match: { operationType: WATCHED } }], {
      fullDocument: 'updateLookup',
      maxAwaitTimeMS: 1000,
      ...(resumeAfter ? { resumeAfter } : {}),
    });
  }

  start(): void {
    if (!this.closed) this.hub.start();
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
   *
   * A token older than the database's change history (MongoDB's ChangeStreamHistoryLost; mongo-java-server's
   * trimmed oplog, OPLOG_MAX_ENTRIES / OPLOG_MAX_AGE_SECONDS) is answered with a full re-read: a change stream
   * is opened from now, then every record of the collection is sent as it is (events without an id: the
   * client keeps its old one until a live event, so a drop during the re-read re-reads again), then that
   * stream's changes follow, those made during the re-read included. `reread` is told when it begins;
   * `drain` is awaited between records so a large collection waits for the client instead of overflowing it.
   */
  resume(token: string, fn: (e: FeedEvent) => void, opts: ResumeOptions = {}): () => void {
    let resumeAfter: unknown;
    try {
      resumeAfter = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    } catch {
      throw badRequest('Last-Event-ID is not an event id of this stream');
    }
    let stream = this.open(resumeAfter);
    this.resumed++;
    let open = true;
    const stopped = () => this.closed || !open;
    const emit = (c: ChangeStreamDocument) => {
      const e = toEvent(c);
      if (e) fn(e);
    };
    const follow = async (): Promise<unknown> => {
      const err = await pump(stream, stopped, this.idleMs, emit);
      if (!isHistoryLost(err) || stopped()) return err;
      log.info('resume token older than the change history; re-reading the collection', { collection: this.name });
      opts.reread?.();
      try {
        stream = this.open(undefined);
        // The stream's position is fixed by its first request: before the read, so no change falls between.
        const first = await stream.tryNext();
        for await (const doc of this.col.find({})) {
          if (stopped()) return undefined;
          fn({ id: '', doc });
          await opts.drain?.();
        }
        if (first) emit(first);
      } catch (e) {
        return stopped() ? undefined : e;
      }
      return pump(stream, stopped, this.idleMs, emit);
    };
    void follow().then((err) => {
      if (err) log.warn('resumed change stream failed', { collection: this.name, err: String(err) });
      if (open) opts.ended?.(err);
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
    if (this.ownHub) await this.hub.close();
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
  connectServers: ChangeFeed;
  connectSessions: ChangeFeed;
  /** Resumed streams per principal and unread bytes per client, for both transports. */
  limits: StreamLimits;
  close(): Promise<void>;
}

export function createFeeds(store: Store, limits?: StreamLimitsConfig): Feeds {
  const hub = new FeedHub(store.db);
  const jobs = new ChangeFeed(store.col(Collections.jobs), 'jobs', hub);
  const results = new ChangeFeed(store.col(Collections.results), 'results', hub);
  const sqlHistory = new ChangeFeed(store.col(Collections.sqlHistory), 'sqlHistory', hub);
  const connectServers = new ChangeFeed(store.col(Collections.connectServers), 'connectServers', hub);
  const connectSessions = new ChangeFeed(store.col(Collections.connectSessions), 'connectSessions', hub);
  const all = [jobs, results, sqlHistory, connectServers, connectSessions];
  return {
    jobs,
    results,
    sqlHistory,
    connectServers,
    connectSessions,
    limits: new StreamLimits(limits),
    close: async () => void (await Promise.all([...all.map((f) => f.close()), hub.close()])),
  };
}
