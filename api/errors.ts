// The API's one family of client errors. The error middleware (app.ts) maps them to status + {message}.
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { z } from 'zod';
import { FieldError } from '../domain/delimited';

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

/** Validation failures of a field answer 409, as the interface lists it for validation. */
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
