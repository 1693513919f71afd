// How a benchmark runs: everything it starts is registered with `defer` and torn down by `runBench`, also
// on failure, Ctrl-C or the hard time limit, so a run never leaves processes or folders behind.
import { within } from '../testkit/wait';

type Cleanup = { what: string; fn: () => Promise<unknown> | unknown; timeoutMs: number };
const cleanups: Cleanup[] = [];

/** Registers a teardown step; steps run in reverse order of registration, each bounded in time. */
export function defer(what: string, fn: () => Promise<unknown> | unknown, timeoutMs = 20_000): void {
  cleanups.push({ what, fn, timeoutMs });
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

/** Runs `worker(i)` from `concurrency` loops until `next()` says stop; returns the number of calls made. */
export async function pool(
  concurrency: number,
  next: () => boolean,
  worker: (i: number) => Promise<void>,
): Promise<number> {
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next()) await worker(n++);
    }),
  );
  return n;
}
