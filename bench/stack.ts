// The private stack of a benchmark: a Temporal dev server and mongo-java-server on free ports, in memory,
// in a temp folder; the real API on a free port; the worker as its own process (as deployed) or, with a
// replaced cluster adapter, in this process. Every part is torn down by runBench (bench/lifecycle.ts).
import type { Client } from '@temporalio/client';
import type { Worker, WorkerOptions } from '@temporalio/worker';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ClusterAdapter } from '../domain/driver';
import type { Config } from '../lib/config';
import { setLogLevel } from '../lib/log';
import type { Store } from '../lib/mongo';
import { startServers } from '../testkit/servers';
import { quietTemporal, startStack } from '../testkit/stack';
import { workflowBundle } from '../worker/worker';
import { defer } from './lifecycle';

export interface BenchStack {
  /** Temp folder of this run: services' logs, artifacts, driver folders. Removed at the end (unless KEEP_BENCH_DIR). */
  dir: string;
  config: Config;
  store: Store;
  temporal: Client;
  /** Base URL of the API, e.g. http://127.0.0.1:12345/api/v1 */
  url: string;
  /** The in-process worker, when the stack has a replaced adapter; otherwise the worker is a child process. */
  worker?: Worker;
  /** The API's process id, when it runs as its own process. */
  apiPid?: number;
}

export interface BenchStackOptions {
  /** Replaces the cluster adapter lookup of the worker's activities (no Spark, no Kubernetes). */
  adapterFor?: (clusterName: string) => Promise<ClusterAdapter>;
  /** Extra configuration (environment variable names of lib/config.ts). */
  env?: Record<string, string>;
  /** Data in files, as `npm start` keeps it (Temporal's SQLite, the MongoDB-protocol server's MVStore). */
  persistent?: boolean;
  /** The API in this process (default) or as its own process, as deployed (testkit/stack.ts). */
  api?: 'in-process' | 'process';
}

/** A tiny PYTHON program, the main resource of the jobs the benchmarks submit (it never runs with the recording adapter). */
export const TINY_PY = { name: 'tiny.py', content: 'print("hello from a benchmark")\n' };

/**
 * BENCH_WORKER_OPTIONS: JSON merged into the options of a worker the benchmark builds itself (those with a
 * replaced adapter), to try e.g. {"reuseV8Context": false} or {"workflowThreadPoolSize": 2} without editing code.
 */
function workerOverrides(): Partial<WorkerOptions> {
  const raw = process.env.BENCH_WORKER_OPTIONS;
  if (!raw) return {};
  const o = JSON.parse(raw) as Partial<WorkerOptions>;
  console.log(`worker option overrides: ${JSON.stringify(o)}`);
  return o;
}

export async function startBenchStack(opts: BenchStackOptions = {}): Promise<BenchStack> {
  if (!process.env.LOG_LEVEL) setLogLevel('warn');
  // The SDK's own INFO lines (worker state changes) would drown the figures.
  quietTemporal((process.env.TEMPORAL_LOG_LEVEL as 'WARN' | undefined) ?? 'WARN');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-bench-'));
  defer('temp folder', () => {
    if (process.env.KEEP_BENCH_DIR) console.error(`(kept ${dir})`);
    else rmSync(dir, { recursive: true, force: true });
  });
  const id = path
    .basename(dir)
    .replace(/^spark-bench-/, '')
    .toLowerCase();
  const t0 = performance.now();
  const [servers, bundle] = await Promise.all([
    // BENCH_SERVICES_STACK_DIR: another install of the servers only (e.g. a wrapper that adds server flags).
    startServers({ dir, persistent: opts.persistent ?? false, stackDir: process.env.BENCH_SERVICES_STACK_DIR }),
    // Only an in-process worker needs it; the worker process builds its own.
    opts.adapterFor ? workflowBundle() : undefined,
  ]);
  defer('servers', () => servers.stop(), 30_000);
  const stack = await startStack({
    temporalAddress: servers.temporalAddress,
    mongoUrl: servers.mongoUrl,
    dir,
    id,
    prefix: 'bench',
    env: opts.env,
    // A replaced adapter has to live in this process: the worker runs here, beside the API. Otherwise, as
    // deployed, the worker is its own process, so API and worker do not share an event loop.
    worker: opts.adapterFor ? 'in-process' : 'process',
    api: opts.api,
    bundle,
    adapterFor: opts.adapterFor,
    workerOptions: opts.adapterFor ? workerOverrides() : undefined,
  });
  defer('stack (worker, api, clients)', () => stack.stop(), 45_000);
  console.log(
    `stack up in ${((performance.now() - t0) / 1000).toFixed(1)} s (temporal ${servers.temporalAddress}, mongo :${servers.ports.mongo}, api ${stack.url})`,
  );
  return { dir, ...stack };
}
