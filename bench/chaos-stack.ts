// The supervised dev stack (scripts/stack.ts up) as a child process on free loopback ports, with its data,
// logs, pid files and drivers in one folder, for the fault-injection run (bench/chaos.ts) and its test:
// it says where the API is, which pid each supervised process has now, and stops like Ctrl-C does.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../lib/config';
import { stopProc } from '../scripts/services';
import { freePort } from '../testkit/servers';
import { sleep } from '../testkit/wait';

export const VICTIMS = ['worker', 'api', 'temporal', 'mongo'] as const;
export type Victim = (typeof VICTIMS)[number];

export interface ChaosStack {
  /** Base URL of the API, e.g. http://127.0.0.1:12345/api/v1 */
  url: string;
  dir: string;
  driverDir: string;
  /** The pid the supervisor has recorded for this process now. */
  pidOf(name: Victim): number;
  /** How often each process was restarted, from the supervisor's log lines. */
  restarts(): Record<string, number>;
  /** SIGTERM to the supervisor (as Ctrl-C): it stops everything it started, drivers included. */
  stop(): Promise<void>;
}

/** Starts the stack in `dir` (STACK_RUNNER: tsx by default; dist after `npm run build`). */
export async function startChaosStack(dir: string, timeoutMs = 240_000): Promise<ChaosStack> {
  mkdirSync(dir, { recursive: true });
  const ports = { api: await freePort(), temporal: await freePort(), ui: await freePort(), mongo: await freePort() };
  const driverDir = path.join(dir, 'drivers');
  const env = {
    ...process.env,
    STACK_RUN_DIR: dir,
    STACK_RUNNER: process.env.STACK_RUNNER ?? 'tsx',
    STACK_HEADLESS: '1',
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    MONGO_PORT: String(ports.mongo),
    API_PORT: String(ports.api),
    API_HOST: '127.0.0.1',
    LIVY_PORT: String(await freePort()),
    WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
    DRIVER_DIR: driverDir,
    ARTIFACT_DIR: path.join(dir, 'artifacts'),
    SQL_DATA_DIR: path.join(dir, 'sql'),
    MONGO_DB: 'chaos',
    TASK_QUEUE: 'chaos',
    WATCH_INTERVAL_MS: '250',
    LOG_LEVEL: 'warn',
  };
  const loader = pathToFileURL(path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  const outFile = path.join(dir, 'stack.out');
  const out = createWriteStream(outFile, { flags: 'a' });
  const proc: ChildProcess = spawn(
    process.execPath,
    ['--import', loader, path.join(ROOT, 'scripts', 'stack.ts'), 'up'],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  proc.stdout?.pipe(out);
  proc.stderr?.pipe(out);
  const url = `http://127.0.0.1:${ports.api}/api/v1`;
  const stop = async () => {
    await stopProc(proc);
    out.end();
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(`${url}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the stack did not become healthy; see ${outFile} and ${path.join(dir, 'logs')}`);
    }
    await sleep(500);
  }
  return {
    url,
    dir,
    driverDir,
    pidOf: (name) => {
      const file = path.join(dir, 'pids', name);
      const pid = existsSync(file) ? Number(readFileSync(file, 'utf8')) : NaN;
      if (!(pid > 0)) throw new Error(`no pid recorded for ${name}`);
      return pid;
    },
    restarts: () => {
      const counts: Record<string, number> = {};
      for (const m of readFileSync(outFile, 'utf8').matchAll(/\[stack\] (\w+) (?:exited|failed to start)/g))
        counts[m[1]] = (counts[m[1]] ?? 0) + 1;
      return counts;
    },
    stop,
  };
}
