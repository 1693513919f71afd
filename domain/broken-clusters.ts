// Rules for clusters that cannot be reached and drivers that cannot start, shared by every workflow and
// every adapter: how an unreachable cluster is worded on a job, how long a launch may take, when a group's
// or an SQL engine's driver that keeps failing is started again, and the reason an execution found no
// ready instance.
// Pure and deterministic: workflows, activities and the API import it.

/** Defaults of the settings in lib/config.ts, for workflows started before the settings existed. */
export const DEFAULT_CRASH_LOOP: CrashLoopSettings = { limit: 5, backoffMs: 2_000, maxBackoffMs: 60_000 };

const minutes = (ms: number): string =>
  ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;

/** A job's or instance's `error` while its cluster cannot be asked: the cause (host and error) and since when. */
export const unreachableError = (cause: string, since: number): string =>
  `${cause} (cluster unreachable since ${new Date(since).toISOString()})`;

/** The failure of a launch that ran out of time, with the last cause seen while trying. */
export const launchDeadlineError = (deadlineMs: number, lastCause?: string): string =>
  `the driver did not start within ${minutes(deadlineMs)} (LAUNCH_DEADLINE_MS)${lastCause ? `: ${lastCause}` : ''}`;

/** Whether a driver that has not started since `since` is out of time at `now`. */
export const pastDeadline = (since: number, deadlineMs: number, now: number): boolean => now - since >= deadlineMs;

/** Delay between launch attempts against a cluster that does not answer: 1 s doubling, at most 30 s. */
export const relaunchDelayMs = (failures: number): number => Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1));

// ---- crash loops: group drivers and SQL engines ----------------------------------------------------

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

// ---- executions ------------------------------------------------------------------------------------

/** How an execution's error starts when no instance took it in time; the API answers 409 for it. */
export const NO_READY_INSTANCE = 'no ready instance';

/** The error of an execution no instance took within `waitMs`, with why (from the group's instances). */
export const noReadyInstanceError = (waitMs: number, why: string): string =>
  `${NO_READY_INSTANCE} took the execution within ${minutes(waitMs)} (EXECUTE_WAIT_MS)${why ? `: ${why}` : ''}`;

/** An instance's record as far as the reason for no ready instance goes. */
export type InstanceView = { jobId: string; state: string; error?: string };

/**
 * Why no instance took an execution, from the group's own `error` (a crash loop) and its instances, newest
 * first: instances whose cluster does not answer, instances still starting, the last driver that failed.
 */
export function whyNoReadyInstance(groupError: string | undefined, instances: readonly InstanceView[]): string {
  if (groupError) return groupError;
  const reasons: string[] = [];
  const unknown = instances.filter((i) => i.state === 'UNKNOWN');
  if (unknown.length)
    reasons.push(`cluster unreachable: ${unknown[0].error ?? `instance ${unknown[0].jobId} UNKNOWN`}`);
  const starting = instances.filter((i) => i.state === 'STARTING');
  if (starting.length) reasons.push(`${starting.length} instance(s) still starting`);
  const busy = instances.filter((i) => i.state === 'BUSY');
  if (busy.length) reasons.push(`${busy.length} instance(s) busy`);
  const failed = instances.find((i) => i.state === 'FAILED');
  if (failed && !busy.length) reasons.push(`drivers failing; last error: ${failed.error ?? 'none given'}`);
  return reasons.join('; ') || 'the group has no instances';
}
