// Clusters that cannot be reached and drivers that cannot start, the same for every workflow and every
// adapter: how an unreachable cluster is worded on a job, how long a launch may take, how far apart launch
// attempts are. Pure and deterministic: workflows, activities and the API import it.
import { inWords } from './duration';

/** A job's or instance's `error` while its cluster cannot be asked: the cause (host and error) and since when. */
export const unreachableError = (cause: string, since: number): string =>
  `${cause} (cluster unreachable since ${new Date(since).toISOString()})`;

/** The failure of a launch that ran out of time, with the last cause seen while trying. */
export const launchDeadlineError = (deadlineMs: number, lastCause?: string): string =>
  `the driver did not start within ${inWords(deadlineMs)} (LAUNCH_DEADLINE_MS)${lastCause ? `: ${lastCause}` : ''}`;

/** Whether a driver that has not started since `since` is out of time at `now`. */
export const pastDeadline = (since: number, deadlineMs: number, now: number): boolean => now - since >= deadlineMs;

/** Delay between launch attempts against a cluster that does not answer: 1 s doubling, at most 30 s. */
export const relaunchDelayMs = (failures: number): number => Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1));
