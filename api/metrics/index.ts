// GET /metrics of the API process (Prometheus text format), outside /api/v1 as scrapers expect it.
import type { Context, Next } from 'koa';
import type { Store } from '../../lib/mongo';
import type { Need } from '../auth/roles';
import type { Feeds } from '../streams/feed';
import { attachCollectors } from './collectors';
import { httpMetrics } from './http';
import { createApiMetrics, type ApiMetrics } from './registry';

export const METRICS_PATH = '/metrics';
/** Who may scrape (with AUTH_MODE=on): the counts name no secret, but they are the service's, not public. */
export const METRICS_ROLE: Need = 'viewer';

export interface MetricsEndpoint {
  metrics: ApiMetrics;
  /** Times every request (mount first). */
  timing: ReturnType<typeof httpMetrics>;
  /** Answers GET /metrics; passes anything else on. */
  serve: (ctx: Context, next: Next) => Promise<void>;
}

export function metricsEndpoint(store: Store, feeds: Feeds): MetricsEndpoint {
  const metrics = createApiMetrics();
  // Observing starts at the first scrape; the feeds' close() ends it.
  let attached: (() => void) | undefined;
  return {
    metrics,
    timing: httpMetrics(metrics),
    serve: async (ctx, next) => {
      if (ctx.path !== METRICS_PATH) return next();
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
        ctx.status = 405;
        ctx.set('Allow', 'GET, HEAD');
        ctx.body = { message: `${ctx.method} is not a method of ${METRICS_PATH}; it takes GET, HEAD` };
        return;
      }
      attached ??= attachCollectors(metrics, store, feeds);
      try {
        metrics.newScrape();
        const text = await metrics.registry.metrics();
        ctx.set('Content-Type', metrics.registry.contentType);
        ctx.body = text;
      } catch (e) {
        // The read-model counts need MongoDB: unreachable, the scrape fails as the health check does.
        ctx.status = 503;
        ctx.body = { message: `metrics unavailable: ${e instanceof Error ? e.message : String(e)}` };
      }
    },
  };
}
