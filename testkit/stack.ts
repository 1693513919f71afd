// Service start-up for a test or a benchmark: configuration, MongoDB and Temporal clients, the real API on
// a free port (startApi, as api/main.ts runs it) and the worker, against servers already running
// (testkit/servers.ts). The worker and the API run in this process (so a test can replace the cluster
// adapter) or each as its own process, as deployed.
import type { Client } from '@temporalio/client';
import {
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  type LogEntry,
  type Worker,
  type WorkflowBundleOption,
  type WorkerOptions,
} from '@temporalio/worker';
import { inspect } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ClusterAdapter } from '../domain/driver';
import { startApi } from '../api/server';
import { loadConfig, type Config } from '../lib/config';
import { connectStore, prepareStore, type Store } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { stopProc, type ServiceRunner } from '../scripts/services';
import { createWorker } from '../worker/worker';
import { spawnService, waitForHealth, waitForPoller } from './processes';
import { freePort } from './servers';

export interface StackOptions {
  temporalAddress: string;
  mongoUrl: string;
  /** Folder of this stack: artifacts, driver folders, the worker process's log. */
  dir: string;
  /** Names the database (`<prefix>_<id>`) and task queue (`<prefix>-<id>`), so stacks on the same servers do not meet. */
  id: string;
  prefix: string;
  /** Configuration over process.env (variable names of lib/config.ts). */
  env?: Record<string, string>;
  /**
   * in-process (default): a worker in this process, which may replace the adapter; process: worker/main.ts
   * as its own process, so API and worker do not share an event loop; none: no worker (a test starts its own).
   */
  worker?: 'in-process' | 'process' | 'none';
  /** A prebuilt workflow bundle for an in-process worker (built once per run). */
  bundle?: WorkflowBundleOption;
  /** Replaces the cluster adapter lookup of an in-process worker's activities and of the API (no Spark, no Kubernetes). */
  adapterFor?: (clusterName: string) => Promise<ClusterAdapter>;
  /** Extra Temporal worker options of an in-process worker. */
  workerOptions?: Partial<WorkerOptions>;
  /**
   * in-process (default): the API in this process (a test can read its deps); process: api/main.ts as its
   * own process, as deployed, so the API and this process's clients do not share an event loop.
   */
  api?: 'in-process' | 'process';
  /** How a worker or API process runs (default tsx). */
  runner?: ServiceRunner;
}

export interface Stack {
  config: Config;
  store: Store;
  temporal: Client;
  /** Base URL of the API, e.g. http://127.0.0.1:12345/api/v1 */
  url: string;
  /** The in-process worker, if any. */
  worker?: Worker;
  /** The API's process id when it runs as its own process. */
  apiPid?: number;
  /** Stops the worker, the API and the clients; every step runs even if an earlier one failed. */
  stop(): Promise<void>;
}

/**
 * The SDK's lines through the console, not straight to stderr: under vitest they are shown with the test
 * that caused them, and only when it fails (test/setup-logs.ts).
 */
export const temporalLogToConsole = (entry: LogEntry): void => {
  const when = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const line = `${when} [${entry.level}] ${entry.message}`;
  if (entry.meta === undefined) console.error(line);
  else console.error(line, inspect(entry.meta, { depth: 4, colors: false }));
};

/**
 * The SDK's worker-state lines would drown test and benchmark output; one Runtime per process. The SDK core's
 * own lines (Rust, written straight to stderr by default) are forwarded to the same logger.
 */
export function quietTemporal(level: 'WARN' | 'ERROR' | 'INFO' | 'DEBUG' = 'WARN'): void {
  try {
    Runtime.install({
      logger: new DefaultLogger(level, temporalLogToConsole),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: level }), forward: {} } },
    });
  } catch {
    // already installed in this process
  }
}

export async function startStack(o: StackOptions): Promise<Stack> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: o.temporalAddress,
    MONGO_URL: o.mongoUrl,
    MONGO_DB: `${o.prefix}_${o.id}`,
    TASK_QUEUE: `${o.prefix}-${o.id}`,
    ARTIFACT_DIR: path.join(o.dir, 'artifacts'),
    DRIVER_DIR: path.join(o.dir, 'drivers'),
    // Engines' tables of a test or benchmark are its own, never the dev stack's.
    SQL_DATA_DIR: path.join(o.dir, 'sql'),
    // And so are the links of its drivers' event logs (the History Server's folder).
    SPARK_HISTORY_DIR: path.join(o.dir, 'spark-history'),
    // Without a worker of the stack's own nobody would watch or remove what the API launches at submit.
    ...((o.worker ?? 'in-process') === 'none' ? { LAUNCH_AT_SUBMIT: 'off' } : {}),
    ...o.env,
  };
  const config = loadConfig(env);
  const steps: [what: string, fn: () => Promise<unknown>][] = [];
  const stop = async () => {
    for (const [what, fn] of steps.reverse().splice(0)) {
      try {
        await fn();
      } catch (e) {
        console.error(`! stopping ${what}: ${(e as Error).message}`);
      }
    }
  };
  try {
    const store = await connectStore(config);
    steps.push(['mongo client', () => store.close()]);
    await prepareStore(store);
    const temporal = await connectTemporal(config);
    steps.push(['temporal client', () => temporal.connection.close()]);
    // Runs after the worker and the API have stopped (steps run in reverse).
    steps.push(['workflows left running', () => terminateOpenWorkflows(temporal, config.TASK_QUEUE)]);
    let url: string;
    let apiPid: number | undefined;
    if (o.api === 'process') {
      if (o.adapterFor) throw new Error('a replaced adapter needs the API in this process');
      const apiEnv = {
        ...env,
        API_PORT: String(await freePort()),
        LIVY_PORT: String(await freePort()),
        CONNECT_PORT: '0',
        LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
      };
      const logFile = path.join(o.dir, 'api.log');
      const child = spawnService('api', o.runner ?? 'tsx', apiEnv, logFile);
      steps.push(['api process', () => stopProc(child)]);
      url = `http://127.0.0.1:${apiEnv.API_PORT}/api/v1`;
      apiPid = child.pid;
      await waitForHealth(url, child, 120_000, logFile);
    } else {
      const api = await startApi({ config, store, temporal, port: 0, host: '127.0.0.1', adapterFor: o.adapterFor });
      steps.push(['api', () => api.close()]);
      url = api.url;
    }
    let worker: Worker | undefined;
    if ((o.worker ?? 'in-process') === 'in-process') {
      const w = await createWorker(config, store, {
        bundle: o.bundle,
        adapterFor: o.adapterFor,
        overrides: o.workerOptions,
      });
      worker = w.worker;
      const running = w.run();
      running.catch((e: unknown) => console.error(`! worker stopped: ${(e as Error).message}`));
      steps.push([
        'worker',
        async () => {
          if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
          await running.catch(() => undefined);
        },
      ]);
    } else if (o.worker === 'process') {
      const logFile = path.join(o.dir, 'worker.log');
      const child: ChildProcess = spawnService(
        'worker',
        o.runner ?? 'tsx',
        { ...env, LOG_LEVEL: env.LOG_LEVEL ?? 'warn' },
        logFile,
      );
      steps.push(['worker process', () => stopProc(child)]);
      await waitForPoller(temporal, config, child, 60_000, logFile);
    }
    return { config, store, temporal, url, worker, apiPid, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Ends what a stopped stack left running on its task queue. Harnesses share one Temporal server, and some
 * workflow ids derive from ids every harness has (`sqlengine/default/SPARK_SQL` of the `default`
 * cluster): left running with no worker, such a workflow would stand in for the next harness's own.
 */
async function terminateOpenWorkflows(temporal: Client, taskQueue: string): Promise<void> {
  const query = `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`;
  const ended: Promise<unknown>[] = [];
  for await (const w of temporal.workflow.list({ query })) {
    ended.push(
      temporal.workflow
        .getHandle(w.workflowId, w.runId)
        .terminate('the test stack that ran it stopped')
        .catch(() => undefined),
    );
  }
  await Promise.all(ended);
}
