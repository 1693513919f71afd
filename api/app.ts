// The Koa application: the audit trail, one error middleware, authentication (api/auth/), body parsing, one
// router per resource under /api/v1.
// server.ts binds it to a port together with the Socket.IO streams.
import Router from '@koa/router';
import Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { logger } from '../lib/log';
import { auditRoutes } from './audit/routes';
import { auditTrail } from './audit/trail';
import { authenticate } from './auth/authenticate';
import { withSecurity } from './auth/openapi';
import { apiRoleFor } from './auth/roles';
import { authRoutes } from './auth/routes';
import { clusterRoutes } from './clusters/routes';
import { consoleAssets } from './console';
import type { ApiDeps } from './deps';
import { toHttp } from './errors';
import { groupRoutes } from './groups/routes';
import { healthRoutes } from './health/routes';
import { jobRoutes } from './jobs/routes';
import { metricsEndpoint } from './metrics';
import { API_PREFIX, mount, openApiDocument, type RouteDef } from './routing';
import { scheduleRoutes } from './schedules/routes';
import { hostOriginGuard } from './security/host-origin';
import { sqlRoutes } from './sql/routes';
import { requestSpans } from './tracing';
import { createFeeds } from './streams/feed';
import { streamRoutes } from './streams/routes';

export type { ApiDeps } from './deps';

const log = logger('api');

/** Every route of the service, in the order the OpenAPI document lists them. */
export function allRoutes(deps: ApiDeps): RouteDef[] {
  deps.feeds ??= createFeeds(deps.store, deps.config);
  // Stream paths come before `/job/:jobId` so that `/job/updates` is not read as a job id.
  return [
    ...healthRoutes(deps),
    ...streamRoutes(deps.feeds),
    ...clusterRoutes(deps),
    ...jobRoutes(deps),
    ...groupRoutes(deps),
    ...scheduleRoutes(deps),
    ...sqlRoutes(deps),
    ...authRoutes(deps),
    ...auditRoutes(deps),
  ];
}

export function createApp(deps: ApiDeps, routes: RouteDef[] = allRoutes(deps)): Koa {
  const app = new Koa();
  const uploadDir = path.join(deps.config.STACK_DIR, 'uploads');
  mkdirSync(uploadDir, { recursive: true });

  // With tracing on (lib/tracing.ts), a span per request encloses everything below.
  if (deps.config.OTEL_EXPORTER_OTLP_ENDPOINT) app.use(requestSpans());
  deps.feeds ??= createFeeds(deps.store, deps.config);
  const metrics = metricsEndpoint(deps.store, deps.feeds);
  deps.feeds.limits.register(metrics.metrics.registry);
  app.use(metrics.timing);

  // Before the error middleware, so each record has the status the client saw (403 included; calls refused
  // before the caller was known, such as 401s, are counted on /metrics, not recorded).
  app.use(
    auditTrail(deps.store, { maxPerMinute: deps.config.AUDIT_MAX_PER_MINUTE, registry: metrics.metrics.registry }),
  );
  app.use(async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { message: `no such path: ${ctx.method} ${ctx.path}` };
      } else if (ctx.status === 405 && ctx.body === undefined) {
        ctx.status = 405;
        ctx.body = { message: `${ctx.method} is not a method of ${ctx.path}; it takes ${ctx.response.get('Allow')}` };
      }
    } catch (err) {
      const { status, message, expose } = toHttp(err);
      ctx.status = status;
      ctx.body = { message };
      if (!expose) log.error('request failed', { method: ctx.method, path: ctx.path, err });
    }
  });

  // Foreign Host names (DNS rebinding) and other web pages' state-changing calls, on every path.
  app.use(hostOriginGuard(deps.config, deps.config.API_HOST));

  // The web console's static files: public (they hold no data), outside /api/v1.
  const { OIDC_ISSUER, OIDC_CONSOLE_CLIENT_ID } = deps.config;
  // The console's OIDC sign-in fetches the issuer's discovery document and token endpoint from the browser.
  app.use(
    consoleAssets(deps.config.CONSOLE_DIR, OIDC_ISSUER && OIDC_CONSOLE_CLIENT_ID ? [new URL(OIDC_ISSUER).origin] : []),
  );

  // Before the body is read: an unknown caller's upload is never stored. Roles: the table in auth/roles.ts.
  app.use(authenticate(deps, apiRoleFor, API_PREFIX));
  app.use(metrics.serve);

  app.use(
    koaBody({
      multipart: true,
      urlencoded: true,
      json: true,
      jsonLimit: '5mb',
      formLimit: '5mb',
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
      formidable: { uploadDir, keepExtensions: false, maxFileSize: 1024 * 1024 * 1024, multiples: true },
      onError: (err) => {
        throw Object.assign(new Error(`cannot parse the request body: ${err.message}`), { status: 400 });
      },
    }),
  );

  // Errors Koa reports outside a request's handling, e.g. a stream whose client went away.
  app.on('error', (err: Error & { code?: string }) => {
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
    log.error('server error', { err });
  });
  app.silent = true;

  // Every method is "implemented": an unknown one on a known path answers 405 with Allow, not 501.
  const router = new Router({ prefix: API_PREFIX, methods: [...http.METHODS] });
  mount(router, routes);
  const doc = withSecurity(openApiDocument(routes), apiRoleFor);
  router.get('/openapi.json', (ctx) => {
    ctx.body = doc;
  });
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return app;
}
