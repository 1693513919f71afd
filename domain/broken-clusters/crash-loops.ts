// Drivers that keep failing: when a group's driver (failing before READY) or an SQL engine (dying) is
// started again, and when not any more. One policy, two settings. Pure and deterministic: workflows import it.

/** Defaults of the group settings in lib/config.ts, for workflows started before the settings existed. */
export const DEFAULT_CRASH_LOOP: CrashLoopSettings = { limit: 5, backoffMs: 2_000, maxBackoffMs: 60_000 };

/**
 * When a driver that keeps failing is started again, and when not any more. Groups count consecutive failures
 * before READY and back off between replacements; SQL engines count deaths within a window and restart at once.
 */
export interface CrashLoopSettings {
  /** Failures (consecutive, or within `windowMs`) after which the driver is not started again. */
  limit: number;
  /** First delay before the next start; doubles with each further failure (0: at once). */
  backoffMs: number;
  maxBackoffMs: number;
  /** Only failures this recent count; none: every failure since the last reset counts. */
  windowMs?: number;
}

/** An SQL engine that dies three times within 5 minutes is FAILED instead of restarted again. */
export const SQL_ENGINE_CRASH_LOOP = {
  limit: 3,
  backoffMs: 0,
  maxBackoffMs: 0,
  windowMs: 5 * 60_000,
} satisfies CrashLoopSettings;

/** Drivers failing one after another (reset when one becomes READY, or a user acts). */
export interface CrashLoop {
  failures: number;
  lastError?: string;
  /** Epoch ms of the last failure. */
  lastFailure?: number;
  /** With a window: when each failure that still counts happened (epoch ms, oldest first). */
  times?: number[];
}

export const noCrashLoop = (): CrashLoop => ({ failures: 0 });

/** The loop of a window's failures at these times (an SQL engine's run carries them over as `deaths`). */
export const crashLoopAt = (times: readonly number[]): CrashLoop =>
  times.length ? { failures: times.length, lastFailure: times[times.length - 1], times: [...times] } : noCrashLoop();

/** The loop after a driver failed (a group's: before it was READY). */
export function afterFailure(c: CrashLoop, error: string, now: number, s?: CrashLoopSettings): CrashLoop {
  if (s?.windowMs === undefined) return { failures: c.failures + 1, lastError: error, lastFailure: now };
  const windowMs = s.windowMs;
  const times = [...(c.times ?? []).filter((t) => now - t < windowMs), now];
  return { failures: times.length, lastError: error, lastFailure: now, times };
}

/** The driver is not started again. */
export const crashLooping = (c: CrashLoop, s: CrashLoopSettings): boolean => c.failures >= s.limit;

/** When the next start may be (epoch ms): at once without failures, else after an exponential delay. */
export function nextStartAt(c: CrashLoop, s: CrashLoopSettings): number {
  if (c.failures === 0 || c.lastFailure === undefined) return 0;
  return c.lastFailure + Math.min(s.maxBackoffMs, s.backoffMs * 2 ** (c.failures - 1));
}

/** The group's `error` while it stops replacing drivers. */
export const crashLoopError = (c: CrashLoop): string =>
  `stopped replacing drivers after ${c.failures} consecutive failures before READY; last: ${c.lastError ?? 'unknown'}` +
  '. Rescale, update or restart the group to try again';
