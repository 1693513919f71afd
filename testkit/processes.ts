// The API and worker as child processes (as deployed), and when each is ready: the worker once its task
// queue has a poller, the API once its health check answers 200.
import type { Client } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../lib/config';
import { serviceCommand, type ServiceRunner } from '../scripts/services';
import { sleep } from './wait';

/** Starts api/main.ts or worker/main.ts (compiled or through tsx) with the given environment; output goes to logFile. */
export function spawnService(
  name: 'api' | 'worker',
  runner: ServiceRunner,
  env: NodeJS.ProcessEnv,
  logFile: string,
): ChildProcess {
  const { cmd, args } = serviceCommand(name, runner);
  mkdirSync(path.dirname(logFile), { recursive: true });
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  return child;
}

const exited = (child: ChildProcess, what: string, logFile: string) =>
  child.exitCode !== null || child.signalCode !== null
    ? new Error(`${what} exited (${child.exitCode ?? child.signalCode}); see ${logFile}`)
    : undefined;

/** Resolves once a worker polls the config's task queue (a worker logs nothing at warn level when ready). */
export async function waitForPoller(
  temporal: Client,
  config: Config,
  child: ChildProcess,
  timeoutMs: number,
  logFile: string,
  intervalMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await temporal.workflowService.describeTaskQueue({
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: { name: config.TASK_QUEUE },
      taskQueueType: 1, // workflow tasks
    });
    if ((d.pollers ?? []).length > 0) return;
    const gone = exited(child, 'worker process', logFile);
    if (gone) throw gone;
    if (Date.now() > deadline) throw new Error(`worker process did not poll within ${timeoutMs} ms; see ${logFile}`);
    await sleep(intervalMs);
  }
}

/** Resolves once GET <url>/health answers 200 (Temporal and MongoDB reachable). */
export async function waitForHealth(
  url: string,
  child: ChildProcess,
  timeoutMs: number,
  logFile: string,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(`${url}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    const gone = exited(child, 'api process', logFile);
    if (gone) throw gone;
    if (Date.now() > deadline)
      throw new Error(`api process not healthy within ${timeoutMs} ms (last status ${status}); see ${logFile}`);
    await sleep(intervalMs);
  }
}
