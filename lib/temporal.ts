// The Temporal client of the API (and of the worker's schedule activities). With tracing on, its interceptor
// puts the active span's context into the headers of every workflow it starts, signals, queries or updates.
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { Config } from './config';

type TemporalConfig = Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'> &
  Partial<Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'>>;

export const clientInterceptors = (config: TemporalConfig) =>
  config.OTEL_EXPORTER_OTLP_ENDPOINT ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;

export async function connectTemporal(config: TemporalConfig): Promise<Client> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, interceptors: clientInterceptors(config) });
}
