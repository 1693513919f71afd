// Shared parts of the benchmarks: a private stack (Temporal dev server + mongo-java-server on free
// ports, in memory, in a temp folder), the real API on 127.0.0.1:<free port>, an in-process worker
// (optionally with a replaced cluster adapter), a recording adapter, and percentile printing.
// Everything a benchmark starts is registered with `defer` and torn down by `runBench`, also on
// failure, Ctrl-C or the hard time limit, so a run never leaves processes or folders behind.
import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { DefaultLogger, Runtime, type Worker, type WorkerOptions } from '@temporalio/worker';
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ClusterAdapter, DriverSpec, DriverStatus } from '../domain/driver';
import { createApp, type ApiDeps } from '../api/app';
import { createFeeds } from '../api/streams/feed';
import { attachSocketIo } from '../api/streams/socketio';
import { loadConfig, ROOT, type Config } from '../lib/config';
import { setLogLevel } from '../lib/log';
import { connectStore, prepareStore, type Store } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { startServices, stopProc } from '../scripts/services';
import { form, request, type Reply } from '../test/http';
import { createWorker, workflowBundle } from '../worker/worker';

// ───────────────────────────── lifecycle ─────────────────────────────

type Cleanup = { what: string; fn: () => Promise<unknown> | unknown; timeoutMs: number };
const cleanups: Cleanup[] = [];

/** Registers a teardown step; steps run in reverse order of registration, each bounded in time. */
export function defer(what: string, fn: () => Promise<unknown> | unknown, timeoutMs = 20_000): void {
  cleanups.push({ what, fn, timeoutMs });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Rejects after ms unless p settles first. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(t));
}

let tornDown: Promise<void> | undefined;
function teardown(): Promise<void> {
  tornDown ??= (async () => {
    while (cleanups.length) {
      const c = cleanups.pop()!;
      try {
        await within(Promise.resolve().then(c.fn), c.timeoutMs, `cleanup '${c.what}'`);
      } catch (e) {
        console.error(`! ${(e as Error).message}`);
      }
    }
  })();
  return tornDown;
}

export const envInt = (name: string, dflt: number): number => {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}='${v}' is not a non-negative number`);
  return n;
};

/**
 * Runs a benchmark's main function with teardown on every exit path: normal end, error, SIGINT/SIGTERM,
 * and a hard time limit (BENCH_TIMEOUT_S, default `limitS`). Exits the process when done, since some
 * clients (e.g. the one createWorker makes for schedule activities) have no close handle.
 */
export function runBench(name: string, limitS: number, main: () => Promise<void>): void {
  const hardLimitMs = envInt('BENCH_TIMEOUT_S', limitS) * 1000;
  const finish = (code: number) => {
    void teardown().finally(() => process.exit(code));
  };
  const limit = setTimeout(() => {
    console.error(`\n! ${name}: hard time limit of ${hardLimitMs / 1000} s reached; stopping`);
    finish(2);
  }, hardLimitMs);
  limit.unref();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      console.error(`\n! ${name}: ${sig}; stopping`);
      finish(130);
    });
  }
  main().then(
    () => finish(0),
    (e: unknown) => {
      console.error(`\n! ${name} failed: ${(e as Error)?.stack ?? String(e)}`);
      finish(1);
    },
  );
}

// ───────────────────────────── the stack ─────────────────────────────

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

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
}

export interface StackOptions {
  /** Replaces the cluster adapter lookup of the worker's activities (no Spark, no Kubernetes). */
  adapterFor?: (clusterName: string) => Promise<ClusterAdapter>;
  /** Extra configuration (environment variable names of lib/config.ts). */
  env?: Record<string, string>;
}

let runtimeInstalled = false;

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

export async function startStack(opts: StackOptions = {}): Promise<BenchStack> {
  if (!process.env.LOG_LEVEL) setLogLevel('warn');
  if (!runtimeInstalled) {
    // The SDK's own INFO lines (worker state changes) would drown the figures.
    Runtime.install({ logger: new DefaultLogger((process.env.TEMPORAL_LOG_LEVEL as 'WARN' | undefined) ?? 'WARN') });
    runtimeInstalled = true;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-bench-'));
  defer('temp folder', () => {
    if (process.env.KEEP_BENCH_DIR) console.error(`(kept ${dir})`);
    else rmSync(dir, { recursive: true, force: true });
  });
  const id = path.basename(dir).replace(/^spark-bench-/, '').toLowerCase();
  const [temporalPort, temporalUiPort, mongoPort] = [await freePort(), await freePort(), await freePort()];
  const t0 = performance.now();
  const [services, bundle] = await Promise.all([
    startServices({
      // BENCH_SERVICES_STACK_DIR: another install of the servers only (e.g. a wrapper that adds server flags).
      stackDir: process.env.BENCH_SERVICES_STACK_DIR ?? process.env.STACK_DIR ?? path.join(ROOT, '.stack'),
      dataDir: path.join(dir, 'data'),
      logDir: path.join(dir, 'logs'),
      temporalPort,
      temporalUiPort,
      mongoPort,
      persistent: false,
      headless: true,
    }),
    workflowBundle(),
  ]);
  defer('services', () => services.stop(), 30_000);

  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: services.temporalAddress,
    MONGO_URL: services.mongoUrl,
    MONGO_DB: `bench_${id}`,
    TASK_QUEUE: `bench-${id}`,
    ARTIFACT_DIR: path.join(dir, 'artifacts'),
    DRIVER_DIR: path.join(dir, 'drivers'),
    ...opts.env,
  });
  const store = await connectStore(config);
  defer('mongo client', () => store.close());
  await prepareStore(store);
  const temporal = await connectTemporal(config);
  defer('temporal client', () => temporal.connection.close());

  const deps: ApiDeps = { config, store, temporal, feeds: createFeeds(store) };
  defer('change feeds', () => deps.feeds?.close());
  const server = http.createServer(createApp(deps).callback());
  const io = attachSocketIo(server, deps.feeds!);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  defer('api server', async () => {
    await io.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;

  let worker: Worker | undefined;
  if (opts.adapterFor) {
    // A replaced adapter has to live in this process: the worker runs here, beside the API.
    const w = await createWorker(config, store, { bundle, adapterFor: opts.adapterFor, overrides: workerOverrides() });
    worker = w.worker;
    const running = w.run();
    running.catch((e: unknown) => console.error(`! worker stopped: ${(e as Error).message}`));
    defer('worker', async () => {
      if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
      await running.catch(() => undefined);
    });
  } else {
    // As deployed: the worker is its own process (worker/main.ts), so API and worker do not share an event loop.
    await startWorkerProcess(config, path.join(dir, 'logs', 'worker.log'));
  }
  console.log(`stack up in ${((performance.now() - t0) / 1000).toFixed(1)} s (temporal ${services.temporalAddress}, mongo :${mongoPort}, api ${url})`);
  return { dir, config, store, temporal, url, worker };
}

// ───────────────────────────── HTTP ─────────────────────────────

export type { Reply };
export { form };

/** fetch + JSON. A FormData body goes as multipart, an object as JSON. */
export const call = (url: string, method: string, p: string, body?: unknown): Promise<Reply> => request(url, method, p, body);

/** Like call, but a status other than 200 throws with the body's message. */
export async function ok(url: string, method: string, p: string, body?: unknown): Promise<any> {
  const r = await call(url, method, p, body);
  if (r.status !== 200) throw new Error(`${method} ${p}: HTTP ${r.status}: ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}`);
  return r.body;
}

/** A tiny PYTHON program, the main resource of the jobs the benchmarks submit (it never runs with the recording adapter). */
export const TINY_PY = { name: 'tiny.py', content: 'print("hello from a benchmark")\n' };

/** Polls fn until it returns a truthy value; throws after timeoutMs, or at once on an error with `fatal: true`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs: number, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      // An error marked fatal ends the wait at once (e.g. a driver that failed to start).
      if ((e as { fatal?: boolean }).fatal) throw e;
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(intervalMs);
  }
}

/** Runs `worker(i)` from `concurrency` loops until `next()` says stop; returns the number of calls made. */
export async function pool(concurrency: number, next: () => boolean, worker: (i: number) => Promise<void>): Promise<number> {
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next()) await worker(n++);
    }),
  );
  return n;
}

// ───────────────────────────── recording adapter ─────────────────────────────

/**
 * A cluster adapter that runs nothing: it records when launch was called for each driverId (the
 * performance.now() clock of this process, and Date.now()), reports the driver RUNNING at launch and
 * SUCCEEDED on the next status call. Measures what the service adds before a driver would start.
 */
export class RecordingAdapter implements ClusterAdapter {
  readonly launches = new Map<string, { perf: number; wall: number; spec: DriverSpec }>();
  private readonly waiters = new Map<string, ((perf: number) => void)[]>();

  async launch(spec: DriverSpec): Promise<DriverStatus> {
    const perf = performance.now();
    const wall = Date.now();
    if (!this.launches.has(spec.driverId)) {
      this.launches.set(spec.driverId, { perf, wall, spec });
      for (const w of this.waiters.get(spec.driverId) ?? []) w(perf);
      this.waiters.delete(spec.driverId);
    }
    return { phase: 'RUNNING', startTime: this.launches.get(spec.driverId)!.wall };
  }

  async status(driverId: string): Promise<DriverStatus> {
    const l = this.launches.get(driverId);
    if (!l) return { phase: 'MISSING' };
    return { phase: 'SUCCEEDED', exitCode: 0, startTime: l.wall, endTime: Date.now() };
  }

  async logs(): Promise<[]> {
    return [];
  }

  async remove(): Promise<void> {}

  /** performance.now() of the first launch of driverId (waits for it up to timeoutMs). */
  launched(driverId: string, timeoutMs = 30_000): Promise<number> {
    const l = this.launches.get(driverId);
    if (l) return Promise.resolve(l.perf);
    return within(
      new Promise<number>((resolve) => this.waiters.set(driverId, [...(this.waiters.get(driverId) ?? []), resolve])),
      timeoutMs,
      `launch of ${driverId}`,
    );
  }
}

// ───────────────────────────── figures ─────────────────────────────

export interface Stats {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted values. */
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

export function stats(values: number[]): Stats {
  if (values.length === 0) return { n: 0, min: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, min: s[0], p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), max: s[s.length - 1], mean: s.reduce((a, b) => a + b, 0) / s.length };
}

const fmt = (v: number) => (Number.isNaN(v) ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** Prints a table of latency distributions, in ms. */
export function printStats(title: string, rows: [label: string, values: number[]][]): void {
  const width = Math.max(10, ...rows.map(([l]) => l.length));
  console.log(`\n${title}`);
  console.log(`  ${'ms'.padEnd(width)} ${['n', 'min', 'p50', 'p90', 'p99', 'max', 'mean'].map((h) => h.padStart(7)).join(' ')}`);
  for (const [label, values] of rows) {
    const s = stats(values);
    console.log(`  ${label.padEnd(width)} ${[String(s.n), fmt(s.min), fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.max), fmt(s.mean)].map((c) => c.padStart(7)).join(' ')}`);
  }
}

/** Prints a target line: the figure, the bound, and whether it was met. */
export function printTarget(what: string, value: number, op: '<' | '>', bound: number, unit: string): boolean {
  const met = op === '<' ? value < bound : value > bound;
  console.log(`  target ${what} ${op} ${bound} ${unit}: measured ${fmt(value)} ${unit}  ${met ? 'MET' : 'NOT MET'}`);
  return met;
}

/** One line naming the machine, for the results table. */
export function printHeader(name: string): void {
  const cpus = os.cpus();
  const [l1, l5] = os.loadavg();
  console.log(
    `# ${name}  ${new Date().toISOString()}  node ${process.version}  ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, load ${l1.toFixed(1)}/${l5.toFixed(1)}`,
  );
  // Everything here (Temporal, MongoDB, API, worker, drivers) shares the CPUs; other work skews the figures.
  if (l1 > cpus.length / 2) console.log(`  note: load average ${l1.toFixed(1)} on ${cpus.length} CPUs before the start; other processes will skew the figures`);
}

/** A final machine-readable line (`BENCH {...}`) for scripts that collect results. */
export function printJson(name: string, figures: Record<string, unknown>): void {
  console.log(`\nBENCH ${JSON.stringify({ bench: name, date: new Date().toISOString(), cpus: os.cpus().length, load1: round(os.loadavg()[0], 2), ...figures })}`);
}

export const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

// ───────────────────────────── where the time goes ─────────────────────────────

/** An event's type, from the one `…EventAttributes` field it has set (no proto enum import needed). */
function eventName(e: Record<string, unknown>): string {
  for (const [k, v] of Object.entries(e)) if (k.endsWith('EventAttributes') && v) return k.replace(/EventAttributes$/, '').replace(/^./, (c) => c.toUpperCase());
  return `Event${String(e.eventType)}`;
}

export interface Traced {
  workflowId: string;
  /** Epoch ms (fractional) when the client sent the request that started the workflow. */
  requestStart?: number;
  /** Epoch ms (fractional) when the client had the response. */
  responseEnd?: number;
  /** Further moments observed outside Temporal (e.g. the adapter's launch call), placed after the events. */
  after?: [label: string, epochMs: number][];
}

/**
 * Reads the histories of the given workflows and prints, for their most common event sequence, the
 * median time between consecutive events (the server's timestamps), framed by the client's request
 * start and response, so one sees which hop (API, task dispatch, worker, runner) the time goes to.
 * `stopAt` cuts each history at the first event of that type (e.g. the launch activity's scheduling).
 */
export async function printHistoryBreakdown(title: string, temporal: Client, items: Traced[], stopAt?: string): Promise<void> {
  const seqs = new Map<string, { names: string[]; gaps: number[][] }>();
  for (const it of items) {
    const h = await temporal.workflow.getHandle(it.workflowId).fetchHistory();
    let events = (h.events ?? []).map((e) => ({ name: eventName(e as Record<string, unknown>), t: tsToMs(e.eventTime) }));
    if (stopAt) {
      const i = events.findIndex((e) => e.name === stopAt);
      if (i >= 0) events = events.slice(0, i + 1);
    }
    const after = it.after ?? [];
    const names = [
      ...(it.requestStart !== undefined ? ['(client: request sent)'] : []),
      ...events.map((e) => e.name),
      ...after.map(([label]) => label),
      ...(it.responseEnd !== undefined ? ['(client: response received)'] : []),
    ];
    const times = [
      ...(it.requestStart !== undefined ? [it.requestStart] : []),
      ...events.map((e) => e.t),
      ...after.map(([, t]) => t),
      ...(it.responseEnd !== undefined ? [it.responseEnd] : []),
    ];
    const key = names.join('>');
    const entry = seqs.get(key) ?? { names, gaps: names.slice(1).map(() => []) };
    for (let i = 1; i < times.length; i++) entry.gaps[i - 1].push(times[i] - times[i - 1]);
    seqs.set(key, entry);
  }
  const [best] = [...seqs.values()].sort((a, b) => b.gaps[0].length - a.gaps[0].length);
  if (!best) return;
  const n = best.gaps[0]?.length ?? 0;
  console.log(`
${title}: median ms between events (${n} of ${items.length} workflows share this sequence; server timestamps have ms resolution)`);
  let total = 0;
  console.log(`  ${''.padStart(8)}  ${best.names[0]}`);
  for (let i = 1; i < best.names.length; i++) {
    const m = stats(best.gaps[i - 1]).p50;
    total += m;
    console.log(`  ${('+' + m.toFixed(1)).padStart(8)}  ${best.names[i]}`);
  }
  console.log(`  ${total.toFixed(1).padStart(8)}  (sum of the medians)`);
}

/** Starts worker/main.ts as a child process with the stack's configuration; stopped at the end. */
async function startWorkerProcess(config: Config, logFile: string): Promise<void> {
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
    MONGO_URL: config.MONGO_URL,
    MONGO_DB: config.MONGO_DB,
    TASK_QUEUE: config.TASK_QUEUE,
    ARTIFACT_DIR: config.ARTIFACT_DIR,
    DRIVER_DIR: config.DRIVER_DIR,
    LOG_LEVEL: 'warn',
  };
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [path.join(ROOT, 'worker', 'main.ts')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  defer('worker process', () => stopProc(child), 20_000);
  // Ready once it polls: its first log line at warn level is none, so wait for the task queue to have a poller.
  const temporal = await connectTemporal(config);
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const d = await temporal.workflowService.describeTaskQueue({
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: { name: config.TASK_QUEUE },
        taskQueueType: 1,
      });
      if ((d.pollers ?? []).length > 0) return;
      if (child.exitCode !== null) throw new Error(`worker process exited with code ${child.exitCode}; see ${logFile}`);
      if (Date.now() > deadline) throw new Error(`worker process did not poll within 60 s; see ${logFile}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await temporal.connection.close();
  }
}
