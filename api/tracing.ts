// A server span per API request (mounted only when tracing is on, lib/tracing.ts): named by the route
// template once the router has matched it, continuing a caller's trace from its traceparent header. The
// Temporal client's interceptor carries the span into the workflows the request starts or signals.
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Next } from 'koa';

const tracer = trace.getTracer('spark-orchestrator-api');

export function requestSpans() {
  return (ctx: Context, next: Next): Promise<void> => {
    const parent = propagation.extract(context.active(), ctx.headers);
    return tracer.startActiveSpan(
      `${ctx.method} ${ctx.path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path } },
      parent,
      async (span) => {
        try {
          await next();
        } catch (e) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
          throw e;
        } finally {
          const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute;
          if (typeof route === 'string') {
            span.updateName(`${ctx.method} ${route}`);
            span.setAttribute('http.route', route);
          }
          span.setAttribute('http.response.status_code', ctx.status);
          if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      },
    );
  };
}
