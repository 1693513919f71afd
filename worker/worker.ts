// Builds the Temporal worker: every workflow and the activities, on the main task queue.
// Used by worker/main.ts and by the end-to-end tests (which run it in-process).
import { Client, Connection } from '@temporalio/client';
import {
  NativeConnection,
  Worker,
  bundleWorkflowCode,
  type WorkflowBundle,
  type WorkflowBundleOption,
  type WorkerOptions as TemporalWorkerOptions,
} from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { fileURLToPath } from 'node:url';
import { createActivities } from '../activities';
import type { ClusterAdapter } from '../domain/driver';
import type { Config } from '../lib/config';
import type { Store } from '../lib/mongo';
import { clientInterceptors } from '../lib/temporal';
import { startTracing } from '../lib/tracing';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/**
 * Interceptors inside every workflow bundle (here, scripts/build.mjs, the tests' bundles): the Temporal SDK's
 * OpenTelemetry ones, which continue the trace of the request that started or signalled a workflow and pass
 * it on to its activities, for the workflows that carry a trace (workflows/trace-interceptors.ts). Their
 * spans leave the sandbox through the `exporter` sink (createWorker).
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [
  fileURLToPath(new URL('../workflows/trace-interceptors.ts', import.meta.url)),
];

let bundle: Promise<WorkflowBundle> | undefined;
/** The workflow bundle is built once per process (webpack takes seconds). */
export const workflowBundle = () =>
  (bundle ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: quietBundlerLogger,
  }));

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => console.warn(m),
  error: (m: string) => console.error(m),
};

export interface WorkerOptions {
  /** A prebuilt bundle: its code (built once per test run) or its file (dist/workflow-bundle.js); built at start otherwise. */
  bundle?: WorkflowBundleOption;
  /** Replaces the cluster adapters (tests, benchmarks). */
  adapterFor?: (clusterName: string) => Promise<ClusterAdapter>;
  /** Extra Temporal worker options (benchmarks' experiments). */
  overrides?: Partial<TemporalWorkerOptions>;
}

export interface ServiceWorker {
  worker: Worker;
  /** Runs until shutdown (SIGTERM/SIGINT or worker.shutdown()), then closes the connections it opened. */
  run(): Promise<void>;
}

export async function createWorker(config: Config, store: Store, opts: WorkerOptions = {}): Promise<ServiceWorker> {
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  // Schedule activities manage Temporal Schedules through an ordinary client.
  const temporal = new Client({
    connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }),
    namespace: config.TEMPORAL_NAMESPACE,
    interceptors: clientInterceptors(config),
  });
  const tracing = startTracing(config, 'worker');
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TASK_QUEUE,
    workflowBundle: opts.bundle ?? (await workflowBundle()),
    activities: createActivities({ config, store, temporal, adapterFor: opts.adapterFor }),
    // The workflows' spans (dropped unless tracing is on), and with tracing a span around each activity.
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
    ...(tracing.enabled
      ? {
          interceptors: {
            activity: [
              (ctx) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
                outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
              }),
            ],
          },
        }
      : {}),
    maxConcurrentActivityTaskExecutions: 500,
    maxConcurrentLocalActivityExecutions: 200,
    maxConcurrentWorkflowTaskExecutions: 100,
    // Drivers are external processes: a worker stopping must not wait for long watch activities.
    shutdownGraceTime: '5s',
    ...opts.overrides,
  });
  return {
    worker,
    run: () =>
      worker.run().finally(async () => {
        await temporal.connection.close();
        await connection.close();
      }),
  };
}
