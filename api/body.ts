// Body parsing, one middleware per route, mounted after the route's role check: nothing of a refused
// caller's body is read, and a multipart upload's temporary files (formidable, STACK_DIR/uploads) are
// deleted once the request is over, whatever its answer, unless the handler moved them away.
import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { logger } from '../lib/log';
import { badRequest } from './errors';

/** json: application/json only; form: multipart/form-data, urlencoded or JSON. */
export type BodyKind = 'json' | 'form';

export interface BodyOptions {
  kind: BodyKind;
  /** `optional`: a request without a body (no Content-Type, nothing sent) is left unread. */
  optional?: boolean;
  /** Where multipart files are written while the request lasts (form only). */
  uploadDir?: string;
}

const log = logger('api');

const LIMIT = '5mb';
const MAX_FILE = 1024 * 1024 * 1024;
const ALL_METHODS = Object.values(HttpMethodEnum);

const parseError = (err: Error) => {
  throw Object.assign(new Error(`cannot parse the request body: ${err.message}`), { status: 400 });
};

// koa-body carries its own copy of Koa's types: its middlewares are Koa middlewares all the same.
const parser = (opts: Parameters<typeof koaBody>[0]): Middleware => koaBody(opts) as unknown as Middleware;

const common: Parameters<typeof koaBody>[0] = {
  jsonLimit: LIMIT,
  formLimit: LIMIT,
  text: false,
  parsedMethods: ALL_METHODS,
  onError: parseError,
};

export const isJsonType = (type: string): boolean => type === 'application/json' || type.endsWith('+json');
const isFormType = (type: string) => type === 'multipart/form-data' || type === 'application/x-www-form-urlencoded';

/** True when the request carries no body at all. */
export const isEmptyRequest = (ctx: { request: { type: string; length?: number } }): boolean =>
  !ctx.request.type && !Number(ctx.request.length ?? 0);

export function readBody(opts: BodyOptions): Middleware {
  const json = parser({ ...common, json: true, urlencoded: opts.kind === 'form', multipart: false });
  return async (ctx, next) => {
    if (opts.optional && isEmptyRequest(ctx)) return next();
    const type = ctx.request.type;
    if (opts.kind === 'json' && !isJsonType(type))
      throw badRequest(`expected a JSON body (Content-Type: application/json), got '${type || 'none'}'`);
    if (opts.kind === 'form' && !isFormType(type) && !isJsonType(type))
      throw badRequest(`expected a multipart/form-data body, got '${type || 'none'}'`);
    if (type !== 'multipart/form-data') return json(ctx, next);
    if (!opts.uploadDir) throw badRequest('this path takes no file uploads');
    // A folder of this request's own: removing it removes every file formidable began, finished or not,
    // and a file whose opening was still under way when the request ended can no longer be created.
    const dir = path.join(opts.uploadDir, randomUUID());
    await mkdir(dir, { recursive: true });
    const multipart = parser({
      ...common,
      json: false,
      urlencoded: false,
      multipart: true,
      formidable: { uploadDir: dir, keepExtensions: false, maxFileSize: MAX_FILE, multiples: true },
    });
    try {
      await multipart(ctx, next);
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 }).catch((err: unknown) =>
        log.warn('upload folder not removed', { dir, err: String(err) }),
      );
    }
  };
}
