// The Temporal client of the API (and of the worker's schedule activities). With tracing on, its interceptor
// puts the active span's context into the headers of every workflow it starts, signals, queries or updates.
import type { AsyncLocalStorage } from 'node:async_hooks';
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { Config } from './config';

type TemporalConfig = Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'> &
  Partial<Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'>>;

export const clientInterceptors = (config: TemporalConfig) =>
  config.OTEL_EXPORTER_OTLP_ENDPOINT ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;

/**
 * The Connection's call context (what `withMetadata`, `withDeadline`, `withAbortSignal` and `withApiKey` set) for
 * the synchronous extent of `run` only. The Connection keeps it in an AsyncLocalStorage and runs it on every
 * workflow service call (to add the namespace header), and on Node 20 a storage that ran keeps an async hook on
 * for the whole thread: every promise and every socket write then runs a JS hook, on every request of the API
 * and every chunk of the Spark Connect gateway's byte path. The Connection reads the context while it builds a
 * call, synchronously inside `run`, so nothing it does needs more. What this does not carry is a context over an
 * `await` inside the function given to one of those methods: this service calls none of them.
 */
export function withSyncCallContext(connection: Connection): Connection {
  // The same object, changed in place: the Connection's call implementations hold it, not the property.
  const storage = (connection as unknown as { callContextStorage: AsyncLocalStorage<unknown> }).callContextStorage;
  storage.disable();
  let current: unknown;
  const sync: Pick<AsyncLocalStorage<unknown>, 'getStore' | 'run' | 'disable'> = {
    getStore: () => current,
    run<R>(store: unknown, fn: (...args: unknown[]) => R): R {
      const outer = current;
      current = store;
      try {
        return fn();
      } finally {
        current = outer;
      }
    },
    disable: () => {
      current = undefined;
    },
  };
  Object.assign(storage, sync);
  return connection;
}

export async function connectTemporal(config: TemporalConfig): Promise<Client> {
  const connection = withSyncCallContext(await Connection.connect({ address: config.TEMPORAL_ADDRESS }));
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, interceptors: clientInterceptors(config) });
}
