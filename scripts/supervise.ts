// Keeps one child process of the dev stack running: when it exits without being asked to, a log line says
// so and a new one starts after a backoff (1 s doubling to 30 s, back to 1 s once a run has lasted a minute).
// Used by scripts/stack.ts for the Temporal dev server, the MongoDB-protocol server, the worker and the API.
import type { ChildProcess } from 'node:child_process';
import { stopProc } from './services';

export interface SuperviseOptions {
  name: string;
  /** Starts the process (a new one on each call). */
  spawn: () => ChildProcess;
  /** Called with each new process: e.g. to write its pid file. */
  onStart?: (p: ChildProcess) => void;
  log: (line: string) => void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** A run that lasted this long resets the backoff. */
  healthyAfterMs?: number;
}

export interface Supervised {
  readonly name: string;
  /** The process running now (or the last one, while a restart waits). */
  current(): ChildProcess;
  /** How many times it was restarted. */
  restarts(): number;
  /** Stops it (SIGTERM, then SIGKILL after 10 s) and starts no other. */
  stop(): Promise<void>;
}

export function supervise(o: SuperviseOptions): Supervised {
  const minMs = o.minBackoffMs ?? 1_000;
  const maxMs = o.maxBackoffMs ?? 30_000;
  const healthyMs = o.healthyAfterMs ?? 60_000;
  let backoff = minMs;
  let restarts = 0;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let proc: ChildProcess;

  const start = () => {
    timer = undefined;
    const startedAt = Date.now();
    proc = o.spawn();
    // A spawn failure (e.g. a missing binary) ends like an exit: 'exit' may not follow 'error'.
    let ended = false;
    const onEnd = (how: string) => {
      if (ended || stopping) return;
      ended = true;
      const ranMs = Date.now() - startedAt;
      if (ranMs >= healthyMs) backoff = minMs;
      const delay = backoff;
      backoff = Math.min(backoff * 2, maxMs);
      restarts++;
      o.log(
        `${o.name} ${how} after ${(ranMs / 1000).toFixed(1)} s; restarting in ${delay / 1000} s (restart ${restarts})`,
      );
      timer = setTimeout(start, delay);
    };
    proc.once('exit', (code, sig) => onEnd(`exited (${code ?? sig})`));
    proc.once('error', (e) => onEnd(`failed to start (${e.message})`));
    o.onStart?.(proc);
  };
  start();

  return {
    name: o.name,
    current: () => proc,
    restarts: () => restarts,
    stop: async () => {
      stopping = true;
      if (timer) clearTimeout(timer);
      if (proc.pid !== undefined) await stopProc(proc);
    },
  };
}
