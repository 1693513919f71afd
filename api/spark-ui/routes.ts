// The Spark UI of every job, group instance and SQL engine through the API (viewer): the live driver's UI
// at <resource>/ui/…, the History Server's pages of its application at <resource>/history/…. Only GET
// (and HEAD, which Koa routes as GET): the proxied UIs are read-only. The bare paths are in the OpenAPI
// document; the pages below them (any depth) are mounted by app.ts outside it (their paths take slashes).
import type { ApiDeps } from '../deps';
import { route, type RouteDef } from '../routing';
import { engineSubject, jobSubject, serveHistory, serveLiveUi, type UiSubject } from './service';

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

function routesOf(deps: ApiDeps, pages: boolean): RouteDef[] {
  const job = (p: Record<string, string>) => jobSubject(deps, p.jobId);
  const engine = (p: Record<string, string>) => engineSubject(deps, p.sqlEngineId);
  return (['ui', 'history'] as const).flatMap((kind) => [
    uiRoute(deps, kind, '/job/:jobId', 'job (single job or group instance)', job, pages),
    uiRoute(deps, kind, '/sql/engine/:sqlEngineId', 'SQL engine', engine, pages),
  ]);
}

/** The bare `…/ui` and `…/history` paths, in the route table and the OpenAPI document. */
export const sparkUiRoutes = (deps: ApiDeps): RouteDef[] => routesOf(deps, false);

/** The pages below them, any depth: mounted beside the route table (app.ts), not in the OpenAPI document. */
export const sparkUiPageRoutes = (deps: ApiDeps): RouteDef[] => routesOf(deps, true);
