// The API's one family of client errors, the read that answers 404, and the one error middleware that both
// Koa apps (app.ts, livy/app.ts) use to turn whatever a route throws into a status and {message}.
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import type { Collection, Document, Filter, WithId } from 'mongodb';
import { z } from 'zod';
import { FieldError } from '../domain/delimited';
import type { Logger } from '../lib/log';

export class ApiError extends Error {
  constructor(
    readonly status: 400 | 402 | 404 | 409 | 503,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
export const badRequest = (m: string) => new ApiError(400, m);
export const notFound = (m: string) => new ApiError(404, m);
export const conflict = (m: string) => new ApiError(409, m);
export const overLimit = (m: string) => new ApiError(402, m);
/** A cluster the request needs does not answer now; the message says which and why. */
export const unavailable = (m: string) => new ApiError(503, m);

/** The document `filter` finds in `col`; none answers 404 with `message`. */
export async function findOr404<D extends Document>(
  col: Collection<D>,
  filter: Filter<D>,
  message: string,
): Promise<WithId<D>> {
  const d = await col.findOne(filter);
  if (!d) throw notFound(message);
  return d;
}

/**
 * Runs a workflow update for a request: a validator's refusal is a state conflict (409, with the
 * validator's words); a workflow that no longer runs answers what `gone` says.
 */
export async function workflowUpdate(fn: () => Promise<unknown>, gone: () => ApiError): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof WorkflowUpdateFailedError) throw conflict((e.cause as Error | undefined)?.message ?? e.message);
    if (e instanceof WorkflowNotFoundError) throw gone();
    throw e;
  }
}

/** The message of a validation failure: the first five issues, each with the field it concerns. */
export function zodMessage(e: z.ZodError): string {
  return e.issues
    .slice(0, 5)
    .map((i) => {
      const where = i.path.length ? i.path.join('.') : 'body';
      return `${where}: ${i.message}`;
    })
    .join('; ');
}

/** Any thrown value → [status, message]; statuses ≥ 500 keep their message out of the response. */
export function toHttp(err: unknown): { status: number; message: string; expose: boolean } {
  if (err instanceof ApiError) return { status: err.status, message: err.message, expose: true };
  if (err instanceof FieldError) return { status: 409, message: err.message, expose: true };
  if (err instanceof z.ZodError) return { status: 409, message: zodMessage(err), expose: true };
  const e = err as { status?: number; statusCode?: number; message?: string; code?: number };
  if (e?.code === 11000) return { status: 409, message: 'a resource with that name already exists', expose: true };
  const status = e?.status ?? e?.statusCode;
  // Errors thrown by koa-body (malformed JSON, bad multipart) and koa itself carry a 4xx status.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const mapped = status === 413 || status === 415 || status === 422 ? 400 : status;
    return { status: mapped, message: e.message || 'bad request', expose: true };
  }
  // A backing service down is not the client's fault, and says so rather than "internal error".
  const name = (err as Error)?.name ?? '';
  if (/MongoServerSelectionError|MongoNetworkError|MongoNotConnectedError/.test(name)) {
    return { status: 503, message: 'the database is unavailable; try again shortly', expose: false };
  }
  const grpc = (err as { code?: number; cause?: { code?: number } })?.cause?.code ?? e?.code;
  if (name === 'ServiceError' && grpc === 14)
    return { status: 503, message: 'Temporal is unavailable; try again shortly', expose: false };
  return { status: 500, message: 'internal error', expose: false };
}

/** The answer to a path no route has: paths match only as written. */
export const noSuchPath = (
  method: string,
  p: string,
  hint = 'paths are case-sensitive, with no trailing slash',
): string => `no such path: ${method} ${p} (${hint})`;

export interface ErrorMiddlewareOptions {
  log: Logger;
  /** Appended to the 404 of a path no route has. */
  pathHint?: string;
  /** Status of a zod error a route lets escape: 409 (a field's value) unless the API says otherwise. */
  zodStatus?: 400 | 409;
}

/**
 * Every thrown error becomes its status and {message} (toHttp). A fault of the service (500, or 503 when
 * MongoDB or Temporal is down) answers a generic message and is logged; client errors are not logged. A
 * path no route has answers 404, a method a path does not take 405 with Allow, both with a {message} too.
 */
export function errorMiddleware({ log, pathHint, zodStatus = 409 }: ErrorMiddlewareOptions): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { message: noSuchPath(ctx.method, ctx.path, pathHint) };
      } else if (ctx.status === 405 && ctx.body === undefined) {
        ctx.status = 405;
        ctx.body = { message: `${ctx.method} is not a method of ${ctx.path}; it takes ${ctx.response.get('Allow')}` };
      }
    } catch (err) {
      const { status, message, expose } =
        err instanceof z.ZodError ? { status: zodStatus, message: zodMessage(err), expose: true } : toHttp(err);
      ctx.status = status;
      ctx.body = { message };
      if (!expose) log.error('request failed', { method: ctx.method, path: ctx.path, err });
    }
  };
}

/** Logs errors Koa reports outside a request's handling, except a client that went away mid-answer. */
export function logServerErrors(app: Koa, log: Logger): void {
  app.silent = true;
  app.on('error', (err: Error & { code?: string }) => {
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
    log.error('server error', { err });
  });
}
