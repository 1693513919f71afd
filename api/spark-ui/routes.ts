// The Spark UI of every job, group instance and SQL engine through the API (viewer): the live driver's UI
// at <resource>/ui/…, the History Server's pages of its application at <resource>/history/…. Only GET
// (and HEAD, which Koa routes as GET): the proxied UIs are read-only. The bare paths are in the OpenAPI
// document; the pages below them (any depth) are mounted by app.ts outside it (their paths take slashes), with
// a guard that also takes the session cookie of POST /spark-ui/session (session.ts), so a browser can follow
// the links. Spark's own static files (CSS, scripts, images: no data of any job) are public, from the History
// Server, since a sandboxed page's subresource requests carry no cookie.
import type { ApiDeps } from '../deps';
import { route, type RouteDef } from '../routing';
import {
  connectServerSubject,
  engineSubject,
  jobSubject,
  serveHistory,
  serveLiveUi,
  serveStatic,
  type UiSubject,
} from './service';
import { startSession } from './session';

/** Who may read Spark UIs: whoever may read jobs. */
const ROLE = 'viewer' as const;

type Kind = 'ui' | 'history';
const SERVE = { ui: serveLiveUi, history: serveHistory } as const;
const SUMMARY = {
  ui: 'its live Spark UI (proxied from its driver while it runs; pages below this path)',
  history: "its run's Spark UI in the History Server (pages below this path)",
} as const;

function uiRoute(
  deps: ApiDeps,
  kind: Kind,
  base: string,
  what: string,
  subject: (params: Record<string, string>) => Promise<UiSubject>,
  pages: boolean,
): RouteDef {
  return route({
    method: 'get',
    path: `${base}/${kind}${pages ? '/{*rest}' : ''}`,
    role: ROLE,
    tag: 'spark-ui',
    summary: `The ${what}'s ${SUMMARY[kind]}`,
    errors: [404, 503],
    handler: async ({ params, ctx }) => {
      await SERVE[kind](deps, ctx, await subject(params));
      return undefined;
    },
  });
}

/** Spark's static files under every UI path: the same files for every job, so no job is looked at. */
function staticRoutes(deps: ApiDeps): RouteDef[] {
  return ['/job/:jobId', '/sql/engine/:sqlEngineId', '/connect/server/:connectServerId'].flatMap((base) =>
    (['ui', 'history'] as const).map((kind) =>
      route({
        method: 'get',
        path: `${base}/${kind}/static/{*rest}`,
        role: 'public',
        tag: 'spark-ui',
        summary: "Spark's static files (CSS, scripts, images) of the UI pages",
        errors: [404, 503],
        handler: async ({ ctx }) => {
          await serveStatic(deps, ctx);
          return undefined;
        },
      }),
    ),
  );
}

function routesOf(deps: ApiDeps, pages: boolean): RouteDef[] {
  const job = (p: Record<string, string>) => jobSubject(deps, p.jobId);
  const engine = (p: Record<string, string>) => engineSubject(deps, p.sqlEngineId);
  const connect = (p: Record<string, string>) => connectServerSubject(deps, p.connectServerId);
  return (['ui', 'history'] as const).flatMap((kind) => [
    uiRoute(deps, kind, '/job/:jobId', 'job (single job or group instance)', job, pages),
    uiRoute(deps, kind, '/sql/engine/:sqlEngineId', 'SQL engine', engine, pages),
    uiRoute(deps, kind, '/connect/server/:connectServerId', 'Spark Connect server', connect, pages),
  ]);
}

/** The bare `…/ui` and `…/history` paths and the session, in the route table and the OpenAPI document. */
export const sparkUiRoutes = (deps: ApiDeps): RouteDef[] => [
  ...routesOf(deps, false),
  route({
    method: 'post',
    path: '/spark-ui/session',
    role: ROLE,
    tag: 'spark-ui',
    summary:
      'Sets a short-lived HttpOnly cookie that lets this browser open the Spark UI pages (AUTH_MODE=on; nothing without it)',
    handler: async ({ ctx }) => startSession(deps, ctx),
  }),
];

/**
 * The pages below them, any depth, static files first: mounted beside the route table (app.ts) with the
 * session-aware guard (session.ts uiGuard), not in the OpenAPI document.
 */
export const sparkUiPageRoutes = (deps: ApiDeps): RouteDef[] => [...staticRoutes(deps), ...routesOf(deps, true)];
