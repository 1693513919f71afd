// Builds the Temporal worker: every workflow and the activities, on the main task queue.
// Used by worker/main.ts and by the end-to-end tests (which run it in-process).
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { createActivities } from '../activities';
import type { Config } from '../lib/config';
import type { Store } from '../lib/mongo';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let bundle: Promise<WorkflowBundle> | undefined;
/** The workflow bundle is built once per process (webpack takes seconds). */
export const workflowBundle = () => (bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger }));

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => console.warn(m),
  error: (m: string) => console.error(m),
};

export interface WorkerOptions {
  connection?: NativeConnection;
  /** A prebuilt bundle (tests build it once for all files). */
  bundle?: WorkflowBundle;
}

export async function createWorker(config: Config, store: Store, opts: WorkerOptions = {}): Promise<Worker> {
  const conn = opts.connection ?? (await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS }));
  // Schedule activities manage Temporal Schedules through an ordinary client.
  const temporal = new Client({ connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }), namespace: config.TEMPORAL_NAMESPACE });
  return Worker.create({
    connection: conn,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TASK_QUEUE,
    workflowBundle: opts.bundle ?? (await workflowBundle()),
    activities: createActivities({ config, store, temporal }),
    maxConcurrentActivityTaskExecutions: 500,
    maxConcurrentLocalActivityExecutions: 200,
    maxConcurrentWorkflowTaskExecutions: 100,
    // Drivers are external processes: a worker stopping must not wait for long watch activities.
    shutdownGraceTime: '5s',
  });
}
