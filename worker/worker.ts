// Builds the Temporal worker: every workflow and the activities, on the main task queue, and the activities
// again on this host's own task queue (drivers of local clusters, domain/hosts.ts).
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
import type { Context } from '@temporalio/activity';
import { createActivities } from '../activities';
import { hostTaskQueue } from '../domain/hosts';
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
  /** Polls TASK_QUEUE: every workflow and activity. */
  worker: Worker;
  /** Polls this host's task queue (`<TASK_QUEUE>@<WORKER_HOST>`): activities on the drivers this host owns. */
  hostWorker: Worker;
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
  const activities = createActivities({ config, store, temporal, adapterFor: opts.adapterFor });
  const activityInterceptors = tracing.enabled
    ? {
        activity: [
          (ctx: Context) => ({
            inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      }
    : undefined;
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TASK_QUEUE,
    workflowBundle: opts.bundle ?? (await workflowBundle()),
    activities,
    // The workflows' spans (dropped unless tracing is on), and with tracing a span around each activity.
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
    ...(activityInterceptors ? { interceptors: activityInterceptors } : {}),
    maxConcurrentActivityTaskExecutions: 500,
    maxConcurrentLocalActivityExecutions: 200,
    maxConcurrentWorkflowTaskExecutions: 100,
    // Drivers are external processes: a worker stopping must not wait for long watch activities.
    shutdownGraceTime: '5s',
    ...opts.overrides,
  });
  // The activities on drivers this host owns (domain/hosts.ts): the same activities, on the host's own queue.
  const hostWorker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: hostTaskQueue(config.TASK_QUEUE, config.WORKER_HOST),
    activities,
    ...(activityInterceptors ? { interceptors: activityInterceptors } : {}),
    maxConcurrentActivityTaskExecutions: 500,
    shutdownGraceTime: '5s',
  });
  // One stops, both stop: a worker half-polling would take a host's tasks it cannot finish, or the reverse.
  const both = async (run: Promise<void>, other: Worker) => {
    try {
      await run;
    } finally {
      if (other.getState() === 'RUNNING') other.shutdown();
    }
  };
  return {
    worker,
    hostWorker,
    run: () =>
      Promise.all([both(worker.run(), hostWorker), both(hostWorker.run(), worker)])
        .then(() => undefined)
        .finally(async () => {
          await temporal.connection.close();
          await connection.close();
        }),
  };
}
