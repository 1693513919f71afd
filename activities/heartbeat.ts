// Heartbeats for activities that call a cluster and usually end in milliseconds.
import { Context } from '@temporalio/activity';

/**
 * How often an activity under way heartbeats: well inside the 30 s heartbeat timeout of its option set, and
 * longer than the usual call, which therefore sends none.
 */
export const HEARTBEAT_EVERY_MS = 10_000;

/**
 * `work`, heartbeating every `everyMs` while it runs. With a heartbeat timeout, a worker that dies during the
 * call is noticed within it, not after the start-to-close timeout (minutes). And Temporal's timer for the
 * activity is due at the heartbeat timeout, not at the start-to-close one: an activity that ended long ago
 * leaves no timer that comes due minutes later.
 */
export async function heartbeating<T>(work: Promise<T>, everyMs = HEARTBEAT_EVERY_MS): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
