// The audit trail: one record per state-changing call (every method but GET, HEAD and OPTIONS), refused
// ones included: who (principal), what (method, path, the resource's id), the status it got, and when.
// Written by a Koa middleware around everything else, so the status is the one the client saw.
import type { Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import { logger } from '../../lib/log';
import { Collections, type Store } from '../../lib/mongo';
import type { Principal } from '../auth/authenticate';
import { isRead } from '../auth/roles';
import { toHttp } from '../errors';

const log = logger('audit');

export interface AuditDoc {
  _id: string;
  principal: string;
  /** The role the principal held; null when it was not identified (401). */
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

/**
 * Koa middleware recording every state-changing call. Mount it before authentication, best outside the
 * error middleware (an error thrown through it is recorded with the status toHttp gives it). A failed
 * write is logged and does not change the answer.
 */
export function auditTrail(store: Store): Middleware {
  const col = store.col<AuditDoc>(Collections.audit);
  return async (ctx, next) => {
    if (isRead(ctx.method)) return next();
    const time = Date.now();
    let thrown: number | undefined;
    try {
      await next();
    } catch (e) {
      // Mounted inside an app's error middleware: record the status that middleware will answer.
      thrown = toHttp(e).status;
      throw e;
    } finally {
      const who = ctx.state.principal as Principal | undefined;
      const doc: AuditDoc = {
        _id: randomUUID(),
        principal: who?.id ?? 'unauthenticated',
        role: who?.role ?? null,
        method: ctx.method,
        path: ctx.path,
        resourceId: resourceIdOf(ctx.params as Record<string, string> | undefined, ctx.body),
        status: thrown ?? ctx.status,
        time,
      };
      await col.insertOne(doc).catch((err: unknown) => log.warn('audit record not written', { err: String(err) }));
    }
  };
}
