// OpenTelemetry traces, exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set. One trace follows
// a request from the API (a server span per request, api/tracing.ts) through the Temporal client (which
// carries the context in workflow headers) into the workflow and its activities (the Temporal SDK's
// OpenTelemetry interceptors, wired in worker/worker.ts) down to the cluster adapter's calls. Log lines
// written inside a span carry its trace id (lib/log.ts). Without an endpoint nothing is set up: the API and
// the worker trace nothing, and the workflows' own spans go to a processor that drops them.
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { Config } from './config';

export interface Tracing {
  enabled: boolean;
  resource: Resource;
  /** Where the workflows' spans go (the worker's exporter sink). */
  spanProcessor: SpanProcessor;
  /** Exports what is buffered; call before the process exits. */
  shutdown(): Promise<void>;
}

type TracingConfig = Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'>;

// One provider per process: the API and an in-process worker (tests, benchmarks) share it.
let current: Tracing | undefined;

export function startTracing(config: TracingConfig, role: 'api' | 'worker'): Tracing {
  if (current) return current;
  const resource = new Resource({ 'service.name': `${config.OTEL_SERVICE_NAME}-${role}` });
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '');
  if (!endpoint) {
    return { enabled: false, resource, spanProcessor: new NoopSpanProcessor(), shutdown: async () => undefined };
  }
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }), {
    scheduledDelayMillis: 1000,
  });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The global tracer, W3C trace-context propagation, and AsyncLocalStorage for the active span.
  provider.register();
  current = { enabled: true, resource, spanProcessor, shutdown: () => provider.shutdown() };
  return current;
}
