// Waiting helpers shared by the tests and the benchmarks: polling until a condition holds, and time limits.

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Rejects after ms unless p settles first. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(t));
}

/**
 * Polls fn until it returns a truthy value, which it returns. Errors thrown by fn count as "not yet"
 * (the last one is named on timeout), except an error with `fatal: true`, which ends the wait at once
 * (e.g. a driver that failed to start).
 */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false | null>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      if ((e as { fatal?: boolean }).fatal) throw e;
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not reached within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`);
    await sleep(intervalMs);
  }
}

/** until() for tests, where the assertion names the condition. */
export const eventually = <T>(
  fn: () => Promise<T | undefined | false | null>,
  timeoutMs = 60_000,
  intervalMs = 200,
): Promise<T> => until('condition', fn, timeoutMs, intervalMs);
