// A scale-out test bed on one machine: two worker "hosts", each with its own driver, SQL and
// history folders and its own WORKER_HOST, three worker processes (two on host-a, one on host-b) and two API
// processes, on one Temporal and one MongoDB, with a round-robin client in front of the APIs (a load
// balancer's part: each call goes to the next live API; one that refuses the connection is skipped).
// Used by test/e2e/scale-out.test.ts (the short form) and `npm run chaos -- --scale` (the long form).
import type { Client } from '@temporalio/client';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { hostTaskQueue } from '../domain/hosts';
import { loadConfig, type Config } from '../lib/config';
import { connectStore, prepareStore, type Store } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { killDrivers, stopProc, type ServiceRunner } from '../scripts/services';
import { request, type Reply } from './http';
import { spawnService, waitForHealth } from './processes';
import { freePort } from './servers';
import { sleep } from './wait';

export const HOSTS = ['host-a', 'host-b'] as const;
export type HostId = (typeof HOSTS)[number];

export interface ScaleOutOptions {
  temporalAddress: string;
  mongoUrl: string;
  /** Folder of the bed: one subfolder per host, the processes' logs. */
  dir: string;
  /** Names the database and task queue, as testkit/stack.ts does. */
  id: string;
  prefix: string;
  /** Hosts of the workers, in start order (default: host-a, host-a, host-b). */
  workers?: HostId[];
  apis?: number;
  /** Configuration over process.env for every process. */
  env?: Record<string, string>;
  runner?: ServiceRunner;
}

export interface ServiceProc {
  name: string;
  child: ChildProcess;
  logFile: string;
  alive(): boolean;
  /** kill -9. */
  kill(): void;
}

export interface WorkerProc extends ServiceProc {
  host: HostId;
}

export interface ApiProc extends ServiceProc {
  /** e.g. http://127.0.0.1:1234/api/v1 */
  url: string;
  /** http://127.0.0.1:1234 (for /metrics) */
  origin: string;
}

export interface ScaleOut {
  config: Config;
  store: Store;
  temporal: Client;
  workers: WorkerProc[];
  apis: ApiProc[];
  /** The driver folder of each host. */
  driverDir(host: HostId): string;
  /** The next live API's URL, round robin. */
  nextUrl(): string;
  /**
   * A call through the round-robin client: to the next live API, again on the next if the connection is
   * refused. A call whose connection was cut after it was sent is sent again only if it is a GET (a balancer
   * does not repeat a POST the API may have acted on): otherwise it throws, and the caller cannot know.
   */
  call(method: string, p: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** Starts one more worker process on `host` and waits until it polls. */
  addWorker(host: HostId): Promise<WorkerProc>;
  stop(): Promise<void>;
}

const isAlive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

export async function startScaleOut(o: ScaleOutOptions): Promise<ScaleOut> {
  const runner = o.runner ?? 'tsx';
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: o.temporalAddress,
    MONGO_URL: o.mongoUrl,
    MONGO_DB: `${o.prefix}_${o.id}`,
    TASK_QUEUE: `${o.prefix}-${o.id}`,
    // Uploads are shared (a volume every API and worker mounts, as the chart's).
    ARTIFACT_DIR: path.join(o.dir, 'artifacts'),
    LOG_LEVEL: 'warn',
    WORKER_METRICS_ADDRESS: '',
    ...o.env,
  };
  const hostEnv = (host: HostId): NodeJS.ProcessEnv => ({
    ...base,
    WORKER_HOST: host,
    DRIVER_DIR: path.join(o.dir, host, 'drivers'),
    SQL_DATA_DIR: path.join(o.dir, host, 'sql'),
    SPARK_HISTORY_DIR: path.join(o.dir, host, 'spark-history'),
  });
  const config = loadConfig(base);
  const procs: ServiceProc[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    await Promise.all(procs.map((p) => stopProc(p.child).catch(() => undefined)));
    // Drivers outlive workers by design (a group's runners, say): none outlives the bed.
    for (const h of HOSTS) await killDrivers(path.join(o.dir, h, 'drivers')).catch(() => undefined);
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  const proc = (name: string, child: ChildProcess, logFile: string): ServiceProc => ({
    name,
    child,
    logFile,
    alive: () => isAlive(child),
    kill: () => void child.kill('SIGKILL'),
  });
  try {
    const store = await connectStore(config);
    closers.push(() => store.close());
    await prepareStore(store);
    const temporal = await connectTemporal(config);
    closers.push(() => temporal.connection.close());
    for (const h of HOSTS) mkdirSync(path.join(o.dir, h, 'drivers'), { recursive: true });

    const workers: WorkerProc[] = [];
    const addWorker = async (host: HostId): Promise<WorkerProc> => {
      const name = `worker-${workers.length + 1}-${host}`;
      const logFile = path.join(o.dir, 'logs', `${name}.log`);
      const w = { ...proc(name, spawnService('worker', runner, hostEnv(host), logFile), logFile), host };
      procs.push(w);
      workers.push(w);
      await waitForPollers(temporal, config, w, 120_000);
      return w;
    };
    // All at once: each bundles the workflows at start (seconds of CPU), so they overlap.
    await Promise.all((o.workers ?? ['host-a', 'host-a', 'host-b']).map(addWorker));

    const apis: ApiProc[] = [];
    await Promise.all(
      Array.from({ length: o.apis ?? 2 }, async (_, i) => {
        const port = await freePort();
        const name = `api-${i + 1}`;
        const logFile = path.join(o.dir, 'logs', `${name}.log`);
        const env = {
          ...base,
          API_PORT: String(port),
          LIVY_PORT: String(await freePort()),
          CONNECT_PORT: '0',
          // An API reads no driver folder of a host but its Spark UI files: host-a's, as if beside it.
          DRIVER_DIR: path.join(o.dir, 'host-a', 'drivers'),
        };
        const origin = `http://127.0.0.1:${port}`;
        const a: ApiProc = {
          ...proc(name, spawnService('api', runner, env, logFile), logFile),
          url: `${origin}/api/v1`,
          origin,
        };
        procs.push(a);
        apis.push(a);
        await waitForHealth(a.url, a.child, 120_000, logFile);
      }),
    );
    apis.sort((a, b) => a.name.localeCompare(b.name));

    let turn = 0;
    const nextUrl = () => {
      const live = apis.filter((a) => a.alive());
      if (live.length === 0) throw new Error('no API is alive');
      return live[turn++ % live.length].url;
    };
    const call = async (method: string, p: string, body?: unknown, headers?: Record<string, string>) => {
      for (let tries = 0; ; tries++) {
        try {
          return await request(nextUrl(), method, p, body, headers);
        } catch (e) {
          // Refused (an API just died): the balancer sends the call to the next one; so for a GET cut off.
          const refused = (e as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
          if (tries >= apis.length * 2 || (!refused && method !== 'GET')) throw e;
          await sleep(100);
        }
      }
    };
    return {
      config,
      store,
      temporal,
      workers,
      apis,
      driverDir: (h) => path.join(o.dir, h, 'drivers'),
      nextUrl,
      call,
      addWorker,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Resolves once `w` polls both the shared task queue and its host's (pollers are told apart by pid). */
async function waitForPollers(temporal: Client, config: Config, w: WorkerProc, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pid = String(w.child.pid);
  const polls = async (taskQueue: string, taskQueueType: number) => {
    const d = await temporal.workflowService.describeTaskQueue({
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: { name: taskQueue },
      taskQueueType,
    });
    return (d.pollers ?? []).some((p) => (p.identity ?? '').startsWith(`${pid}@`));
  };
  for (;;) {
    // Workflow tasks on the shared queue, activity tasks on the host's.
    if ((await polls(config.TASK_QUEUE, 1)) && (await polls(hostTaskQueue(config.TASK_QUEUE, w.host), 2))) return;
    if (!w.alive()) throw new Error(`${w.name} exited (${w.child.exitCode ?? w.child.signalCode}); see ${w.logFile}`);
    if (Date.now() > deadline) throw new Error(`${w.name} did not poll within ${timeoutMs} ms; see ${w.logFile}`);
    await sleep(300);
  }
}
