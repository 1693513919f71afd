// The audit trail: one record per state-changing call (every method but GET, HEAD and OPTIONS) of an
// identified caller, refused ones included (403, 404, 409, …): who (principal), what (method, path, the
// resource's id), the status it got, and when. Written by a Koa middleware around everything else, so the
// status is the one the client saw; the principal is read from ctx.state after the call, so it works
// wherever authentication runs.
//
// Bounded, so that a flood cannot fill the collection: calls refused before the caller was identified (401,
// and 503 when the issuer cannot be reached) are only counted, and each principal gets at most
// AUDIT_MAX_PER_MINUTE records a minute (the rest are counted as dropped, and logged once a minute per
// principal). The retention sweep removes records older than AUDIT_RETENTION_DAYS (activities/retention.ts).
//
// Records go in batches (AuditWriter): one insert of many records costs the API and MongoDB about what one
// record alone costs. A call's answer still waits for its record, which goes with the records of the same
// event-loop turn (no added delay). A call whose route wrote its answer itself (ctx.respond = false: POST
// /sql/execute) has nobody waiting: its record waits up to AUDIT_LINGER_MS for others to share its insert.
import type { Middleware } from 'koa';
import type { Collection } from 'mongodb';
import { randomUUID } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import { logger } from '../../lib/log';
import { Collections, type Store } from '../../lib/mongo';
import type { Principal } from '../auth/authenticate';
import { isRead } from '../auth/roles';
import { toHttp } from '../errors';

const log = logger('audit');

export interface AuditDoc {
  _id: string;
  principal: string;
  /** The role the principal held. */
  role: string | null;
  method: string;
  path: string;
  resourceId: string | null;
  status: number;
  time: number;
}

const idLike = (k: string) => k === 'id' || /Id$/.test(k);

/** The id the call was about: a path parameter (`:jobId`, …), else the id a create answered with. */
export function resourceIdOf(params: Record<string, string> | undefined, body: unknown): string | null {
  for (const [k, v] of Object.entries(params ?? {})) if (idLike(k) && v) return v;
  if (body && typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body)) {
    for (const [k, v] of Object.entries(body as Record<string, unknown>))
      if (idLike(k) && typeof v === 'string') return v;
  }
  return null;
}

export const AUDIT_WINDOW_MS = 60_000;

/** Longest the record of an already answered call waits for others to share its insert. */
export const AUDIT_LINGER_MS = 100;
const MAX_BATCH = 500;

export interface AuditWriter {
  /**
   * Queues a record; resolves once it is written (a failed write is logged, never thrown). `answered`: nobody
   * waits for it, so it may wait up to the linger for a batch; otherwise it goes at the end of this turn.
   */
  write(doc: AuditDoc, answered: boolean): Promise<void>;
  /** Writes everything queued now; resolves once all records queued so far are written. */
  flush(): Promise<void>;
}

/** Records queued together, written by one insert. */
class Batch {
  readonly docs: AuditDoc[] = [];
  readonly written: Promise<void>;
  private go!: () => void;
  constructor(insert: (docs: AuditDoc[]) => Promise<void>) {
    this.written = new Promise<void>((r) => (this.go = r)).then(() => insert(this.docs));
  }
  start(): void {
    this.go();
  }
}

export function createAuditWriter(col: () => Collection<AuditDoc>, lingerMs = AUDIT_LINGER_MS): AuditWriter {
  let batch: Batch | undefined;
  let timer: NodeJS.Timeout | undefined;
  let soon: NodeJS.Immediate | undefined;
  const inFlight = new Set<Promise<void>>();
  const insert = (docs: AuditDoc[]) =>
    col()
      .insertMany(docs, { ordered: false })
      .then(
        () => undefined,
        (err: unknown) => log.warn('audit records not written', { records: docs.length, err: String(err) }),
      );
  const flush = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (soon) clearImmediate(soon);
    soon = undefined;
    const b = batch;
    batch = undefined;
    if (b) {
      inFlight.add(b.written);
      void b.written.then(() => inFlight.delete(b.written));
      b.start();
    }
    return Promise.all(inFlight).then(() => undefined);
  };
  return {
    write(doc, answered) {
      const b = (batch ??= new Batch(insert));
      b.docs.push(doc);
      if (b.docs.length >= MAX_BATCH) void flush();
      else if (!answered) soon ??= setImmediate(() => void flush());
      else timer ??= setTimeout(() => void flush(), lingerMs);
      return b.written;
    },
    flush,
  };
}

export interface AuditOptions {
  /** Records per principal per minute (AUDIT_MAX_PER_MINUTE); default 600. */
  maxPerMinute?: number;
  /** Where the records go (the app's, flushed when it closes); default a writer of this middleware's own. */
  writer?: AuditWriter;
  /** Where the trail's counters are exposed (the API's /metrics registry). */
  registry?: Registry;
  /** For tests. */
  now?: () => number;
}

/** Records per principal within one fixed window; forgotten when the window turns. */
class PerPrincipalBudget {
  private window = -1;
  private readonly used = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly now: () => number,
  ) {}

  /** 'ok' within the budget; 'first-over' for the first record over it in this window, then 'over'. */
  take(principal: string): 'ok' | 'first-over' | 'over' {
    const w = Math.floor(this.now() / AUDIT_WINDOW_MS);
    if (w !== this.window) {
      this.window = w;
      this.used.clear();
    }
    const n = (this.used.get(principal) ?? 0) + 1;
    this.used.set(principal, n);
    return n <= this.max ? 'ok' : n === this.max + 1 ? 'first-over' : 'over';
  }
}

/**
 * Koa middleware recording every state-changing call of an identified caller. Mount it outside
 * authentication, best outside the error middleware (an error thrown through it is recorded with the status
 * toHttp gives it). A failed write is logged and does not change the answer.
 */
export function auditTrail(store: Store, opts: AuditOptions = {}): Middleware {
  const writer = opts.writer ?? createAuditWriter(() => store.col<AuditDoc>(Collections.audit));
  const now = opts.now ?? Date.now;
  const max = opts.maxPerMinute ?? 600;
  const budget = new PerPrincipalBudget(max, now);
  const registers = opts.registry ? [opts.registry] : [];
  const unidentified = new Counter({
    name: 'spark_audit_unidentified_total',
    help: 'State-changing calls refused before the caller was identified (not written to the audit trail), by status',
    labelNames: ['status'],
    registers,
  });
  const dropped = new Counter({
    name: 'spark_audit_records_dropped_total',
    help: 'Audit records not written because their principal was over AUDIT_MAX_PER_MINUTE',
    registers,
  });
  return async (ctx, next) => {
    if (isRead(ctx.method)) return next();
    const time = now();
    let thrown: number | undefined;
    try {
      await next();
    } catch (e) {
      // Mounted inside an app's error middleware: record the status that middleware will answer.
      thrown = toHttp(e).status;
      throw e;
    } finally {
      const status = thrown ?? ctx.status;
      const who = ctx.state.principal as Principal | undefined;
      if (!who) {
        unidentified.inc({ status: String(status) });
      } else {
        const verdict = budget.take(who.id);
        if (verdict === 'ok') {
          const doc: AuditDoc = {
            _id: randomUUID(),
            principal: who.id,
            role: who.role,
            method: ctx.method,
            path: ctx.path,
            resourceId: resourceIdOf(ctx.params as Record<string, string> | undefined, ctx.body),
            status,
            time,
          };
          // Koa answers after this returns, unless the route has answered by itself: then nobody waits.
          const answered = ctx.respond === false;
          const written = writer.write(doc, answered);
          if (!answered) await written;
        } else {
          dropped.inc();
          if (verdict === 'first-over')
            log.warn('audit records dropped: principal over AUDIT_MAX_PER_MINUTE', {
              principal: who.id,
              maxPerMinute: max,
            });
        }
      }
    }
  };
}
