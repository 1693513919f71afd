// The Livy-compatible REST API (Apache Livy 0.8's paths and shapes) as a Koa app of its own, served on
// LIVY_PORT by server.ts: batches are single jobs, sessions CODE groups of scale 1, statements executions.
// Each route declares its role (livyRoutes) and checks it on the route that matched, before its body is
// read; paths match only as written. Middlewares in `before` (the audit trail) run ahead of every route.
// Errors are {message} (and Livy's {msg}): 400 for a malformed request, 404 for an unknown id, 409 for a
// state that refuses the call.
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import http from 'node:http';
import { z } from 'zod';
import { logger } from '../../lib/log';
import { requireRole } from '../auth/authenticate';
import type { Need } from '../auth/roles';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { badRequest, errorMiddleware, logServerErrors, zodMessage } from '../errors';
import type { Query } from '../list';
import { EXACT_PATHS } from '../routing';
import { hostOriginGuard } from '../security/host-origin';
import { batchLog, batchStateOf, createBatch, deleteBatch, getBatch, listBatches } from './batches';
import { BatchCreate, SessionCreate, StatementCreate } from './schemas';
import {
  cancelStatement,
  createSession,
  deleteSession,
  getSession,
  getStatement,
  listSessions,
  listStatements,
  runStatement,
  sessionLog,
  sessionStateOf,
} from './sessions';

const log = logger('livy');

/** What GET /version reports: the Livy release whose REST API this one follows. */
export const LIVY_VERSION = '0.8.0-incubating';

export interface LivyAppOptions {
  /** Run before every route, in order (e.g. the audit trail). */
  before?: Middleware[];
}

/** One route of the Livy API: its role is checked before its body (JSON, when `body`) is read. */
export interface LivyRoute {
  method: 'get' | 'post' | 'delete';
  path: string;
  /** Who may call it (with AUTH_MODE=on): reads need viewer, everything else operator, as on /api/v1. */
  role: Need;
  /** The route reads a JSON body. */
  body?: boolean;
  handler: (ctx: Koa.Context) => Promise<void>;
}

/** An optional integer query parameter (Livy's from and size). */
function intQuery(q: Query, name: string): number | undefined {
  const v = q[name];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string' || !/^-?\d{1,9}$/.test(v)) throw badRequest(`${name}: must be a whole number`);
  return Number(v);
}

/** Paging of the lists: from (default 0) and size (default 100), both at least 0. */
function paging(q: Query): [number, number] {
  const from = intQuery(q, 'from') ?? 0;
  const size = intQuery(q, 'size') ?? 100;
  if (from < 0 || size < 0) throw badRequest('from and size must be at least 0');
  return [from, Math.min(size, 1000)];
}

/** The JSON body parsed by `schema`; a missing body reads as {}. */
function bodyOf<S extends z.ZodType>(ctx: Koa.Context, schema: S): z.infer<S> {
  const raw = (ctx.request as { body?: unknown }).body ?? {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('the body must be a JSON object');
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw badRequest(zodMessage(parsed.error));
  return parsed.data;
}

const created = (ctx: Koa.Context, location: string, body: unknown) => {
  ctx.status = 201;
  ctx.set('Location', location);
  ctx.body = body;
};

export function livyRoutes(deps: ApiDeps): LivyRoute[] {
  return [
    {
      method: 'get',
      path: '/version',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = { version: LIVY_VERSION, user: null, revision: null, branch: null, date: null, url: null };
      },
    },
    {
      method: 'get',
      path: '/sessions',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await listSessions(deps, ...paging(ctx.query));
      },
    },
    {
      method: 'post',
      path: '/sessions',
      role: 'operator',
      body: true,
      handler: async (ctx) => {
        const s = await createSession(deps, bodyOf(ctx, SessionCreate));
        created(ctx, `/sessions/${s.id}`, s);
      },
    },
    {
      method: 'get',
      path: '/sessions/:id',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await getSession(deps, ctx.params.id);
      },
    },
    {
      method: 'delete',
      path: '/sessions/:id',
      role: 'operator',
      handler: async (ctx) => {
        ctx.body = await deleteSession(deps, ctx.params.id);
      },
    },
    {
      method: 'get',
      path: '/sessions/:id/state',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await sessionStateOf(deps, ctx.params.id);
      },
    },
    {
      method: 'get',
      path: '/sessions/:id/log',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await sessionLog(deps, ctx.params.id, intQuery(ctx.query, 'from'), intQuery(ctx.query, 'size'));
      },
    },
    {
      method: 'get',
      path: '/sessions/:id/statements',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await listStatements(deps, ctx.params.id);
      },
    },
    {
      method: 'post',
      path: '/sessions/:id/statements',
      role: 'operator',
      body: true,
      handler: async (ctx) => {
        const st = await runStatement(deps, ctx.params.id, bodyOf(ctx, StatementCreate));
        created(ctx, `/sessions/${ctx.params.id}/statements/${st.id}`, st);
      },
    },
    {
      method: 'get',
      path: '/sessions/:id/statements/:statementId',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await getStatement(deps, ctx.params.id, ctx.params.statementId);
      },
    },
    {
      method: 'post',
      path: '/sessions/:id/statements/:statementId/cancel',
      role: 'operator',
      handler: async (ctx) => {
        ctx.body = await cancelStatement(deps, ctx.params.id, ctx.params.statementId);
      },
    },
    {
      method: 'get',
      path: '/batches',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await listBatches(deps, ...paging(ctx.query));
      },
    },
    {
      method: 'post',
      path: '/batches',
      role: 'operator',
      body: true,
      handler: async (ctx) => {
        const b = await createBatch(deps, bodyOf(ctx, BatchCreate));
        created(ctx, `/batches/${b.id}`, b);
      },
    },
    {
      method: 'get',
      path: '/batches/:id',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await getBatch(deps, ctx.params.id);
      },
    },
    {
      method: 'delete',
      path: '/batches/:id',
      role: 'operator',
      handler: async (ctx) => {
        ctx.body = await deleteBatch(deps, ctx.params.id);
      },
    },
    {
      method: 'get',
      path: '/batches/:id/state',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await batchStateOf(deps, ctx.params.id);
      },
    },
    {
      method: 'get',
      path: '/batches/:id/log',
      role: 'viewer',
      handler: async (ctx) => {
        ctx.body = await batchLog(deps, ctx.params.id, intQuery(ctx.query, 'from'), intQuery(ctx.query, 'size'));
      },
    },
  ];
}

function router(deps: ApiDeps): Router {
  const r = new Router({ ...EXACT_PATHS, methods: [...http.METHODS] });
  for (const def of livyRoutes(deps)) {
    const steps: Middleware[] = [requireRole(deps, def.role)];
    // Livy's JSON bodies; a body-less request reads as {} (bodyOf).
    if (def.body) steps.push(readBody({ kind: 'json', optional: true }));
    r[def.method](def.path, ...steps, (ctx) => def.handler(ctx));
  }
  return r;
}

export function createLivyApp(deps: ApiDeps, opts: LivyAppOptions = {}): Koa {
  const app = new Koa();
  // Livy's own clients read `msg`: every error body carries it besides `message`.
  app.use(async (ctx, next) => {
    await next();
    const b = ctx.body as { message?: unknown; msg?: unknown } | undefined;
    if (ctx.status >= 400 && b && typeof b === 'object' && typeof b.message === 'string') b.msg = b.message;
  });
  // Livy answers a malformed request 400, a zod error included.
  app.use(errorMiddleware({ log, zodStatus: 400 }));
  app.use(hostOriginGuard(deps.config, deps.config.LIVY_HOST));
  for (const m of opts.before ?? []) app.use(m);
  const routes = router(deps);
  app.use(routes.routes());
  app.use(routes.allowedMethods({ throw: false }));
  logServerErrors(app, log);
  return app;
}
