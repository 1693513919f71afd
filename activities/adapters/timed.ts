// Latency of every cluster adapter call, by adapter type, operation and outcome, recorded on the
// activity's metric meter: the worker's Prometheus endpoint (WORKER_METRICS_ADDRESS) exports it as
// `spark_adapter_call_duration_seconds` beside the Temporal SDK's own worker metrics, tagged with the
// activity type. Outside an activity (tests calling an adapter directly) nothing is recorded.
import { Context } from '@temporalio/activity';
import type { ClusterAdapter } from '../../domain/driver';

const METRIC = 'spark_adapter_call_duration';

function record(adapter: string, operation: string, outcome: 'ok' | 'error', seconds: number): void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return;
  }
  ctx.metricMeter
    .createHistogram(METRIC, 'float', 'seconds', 'Cluster adapter calls by adapter type, operation and outcome')
    .record(seconds, { adapter, operation, outcome });
}

/** The same adapter, each of its calls (whatever methods the contract has) timed. */
export function timedAdapter<A extends ClusterAdapter>(a: A, adapter: string): A {
  return new Proxy(a, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return async (...args: unknown[]) => {
        const start = performance.now();
        try {
          const r: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          record(adapter, prop, 'ok', (performance.now() - start) / 1000);
          return r;
        } catch (e) {
          record(adapter, prop, 'error', (performance.now() - start) / 1000);
          throw e;
        }
      };
    },
  });
}
