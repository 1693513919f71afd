// Latency of every HTTP request by the route's template (`/api/v1/job/:jobId`, never the id itself, so
// the label set stays small), method and status. Paths no route matched count as `unmatched`.
import type { Context, Next } from 'koa';
import type { ApiMetrics } from './registry';

export function httpMetrics(m: ApiMetrics) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const end = m.httpDuration.startTimer();
    try {
      await next();
    } finally {
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute;
      end({ method: ctx.method, route: typeof route === 'string' ? route : 'unmatched', status: String(ctx.status) });
    }
  };
}
