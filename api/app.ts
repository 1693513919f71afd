// The Koa application: the audit trail, one error middleware, the console's files, /metrics, and one router
// of every route under /api/v1; each route checks its own role (api/auth/), then reads its body (body.ts).
// server.ts binds it to a port together with the Socket.IO streams.
import Router from '@koa/router';
import Koa from 'koa';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { logger } from '../lib/log';
import { Collections } from '../lib/mongo';
import { auditRoutes } from './audit/routes';
import { auditTrail, createAuditWriter, type AuditDoc } from './audit/trail';
import { requireRole } from './auth/authenticate';
import { withSecurity } from './auth/openapi';
import type { Need } from './auth/roles';
import { authRoutes } from './auth/routes';
import { clusterRoutes } from './clusters/routes';
import { consoleAssets } from './console';
import type { ApiDeps } from './deps';
import { errorMiddleware, logServerErrors } from './errors';
import { groupRoutes } from './groups/routes';
import { healthRoutes } from './health/routes';
import { jobRoutes } from './jobs/routes';
import { METRICS_PATH, METRICS_ROLE, metricsEndpoint } from './metrics';
import { API_PREFIX, EXACT_PATHS, mount, openApiDocument, route, type RouteDef } from './routing';
import { scheduleRoutes } from './schedules/routes';
import { sparkUiPageRoutes, sparkUiRoutes } from './spark-ui/routes';
import { uiGuard } from './spark-ui/session';
import { hostOriginGuard } from './security/host-origin';
import { connectRoutes } from './connect/routes';
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
    ...sparkUiRoutes(deps),
    ...groupRoutes(deps),
    ...scheduleRoutes(deps),
    ...sqlRoutes(deps),
    ...connectRoutes(deps),
    ...authRoutes(deps),
    ...auditRoutes(deps),
  ];
}

/** GET /openapi.json: public, since clients learn the security schemes from it. Not in the document itself. */
const openApiRoute = (doc: Record<string, unknown>): RouteDef =>
  route({
    method: 'get',
    path: '/openapi.json',
    role: 'public',
    tag: 'meta',
    summary: 'This OpenAPI document',
    handler: async () => doc,
  });

/** What the 404 of a path no route has adds: paths match only as written. */
const PATH_HINT = 'paths are case-sensitive, with no trailing slash, as in the OpenAPI document';

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
  deps.audit ??= createAuditWriter(() => deps.store.col<AuditDoc>(Collections.audit));
  app.use(
    auditTrail(deps.store, {
      maxPerMinute: deps.config.AUDIT_MAX_PER_MINUTE,
      registry: metrics.metrics.registry,
      writer: deps.audit,
    }),
  );
  app.use(errorMiddleware({ log, pathHint: PATH_HINT }));

  // Foreign Host names (DNS rebinding) and other web pages' state-changing calls, on every path.
  app.use(hostOriginGuard(deps.config, deps.config.API_HOST));

  // The web console's static files: public (they hold no data), outside /api/v1.
  const { OIDC_ISSUER, OIDC_CONSOLE_CLIENT_ID } = deps.config;
  // The console's OIDC sign-in fetches the issuer's discovery document and token endpoint from the browser.
  app.use(
    consoleAssets(deps.config.CONSOLE_DIR, OIDC_ISSUER && OIDC_CONSOLE_CLIENT_ID ? [new URL(OIDC_ISSUER).origin] : []),
  );

  // Each route (and /metrics) checks the role it declares, on the route that matched, before its body is read.
  const guard = (need: Need) => requireRole(deps, need);
  const metricsGuard = guard(METRICS_ROLE);
  app.use((ctx, next) => (ctx.path === METRICS_PATH ? metricsGuard(ctx, () => metrics.serve(ctx, next)) : next()));

  logServerErrors(app, log);

  // Every method is "implemented": an unknown one on a known path answers 405 with Allow, not 501.
  // Case-sensitive and strict: `/API/V1/auth/keys`, `/api/v1/auth/keys/`, `//api/v1/...` or `%61uth` match no route.
  const router = new Router({ prefix: API_PREFIX, ...EXACT_PATHS, methods: [...http.METHODS] });
  const doc = withSecurity(openApiDocument(routes), routes);
  mount(router, [...routes, openApiRoute(doc)], { guard, uploadDir });
  // The Spark UIs' pages below their documented paths take slashes, which OpenAPI paths cannot say; their guard
  // also takes the Spark UI session cookie, so a browser can follow the links (api/spark-ui/session.ts).
  mount(router, sparkUiPageRoutes(deps), { guard: (need: Need) => uiGuard(deps, need), uploadDir });
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return app;
}
