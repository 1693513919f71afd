// An execution that found no ready instance: how its error reads and why, from the group's instances.
// Pure: the job-instance workflow, the projection and the API import it.
import { inWords } from './duration';

/** How an execution's error starts when no instance took it in time; the API answers 409 for it. */
export const NO_READY_INSTANCE = 'no ready instance';

/** The error of an execution no instance took within `waitMs`, with why (from the group's instances). */
export const noReadyInstanceError = (waitMs: number, why: string): string =>
  `${NO_READY_INSTANCE} took the execution within ${inWords(waitMs)} (EXECUTE_WAIT_MS)${why ? `: ${why}` : ''}`;

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
