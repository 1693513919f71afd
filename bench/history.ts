// Where the time goes in a benchmark: the median time between consecutive events of the workflows it
// started, read from their Temporal histories.
import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { stats } from '../testkit/stats';

/** An event's type, from the one `…EventAttributes` field it has set (no proto enum import needed). */
function eventName(e: Record<string, unknown>): string {
  for (const [k, v] of Object.entries(e))
    if (k.endsWith('EventAttributes') && v)
      return k.replace(/EventAttributes$/, '').replace(/^./, (c) => c.toUpperCase());
  return `Event${String(e.eventType)}`;
}

export interface Traced {
  workflowId: string;
  /** Epoch ms (fractional) when the client sent the request that started the workflow. */
  requestStart?: number;
  /** Epoch ms (fractional) when the client had the response. */
  responseEnd?: number;
  /** Further moments observed outside Temporal (e.g. the adapter's launch call), placed after the events. */
  after?: [label: string, epochMs: number][];
}

/**
 * Reads the histories of the given workflows and prints, for their most common event sequence, the
 * median time between consecutive events (the server's timestamps), framed by the client's request
 * start and response, so one sees which hop (API, task dispatch, worker, runner) the time goes to.
 * `stopAt` cuts each history at the first event of that type (e.g. the launch activity's scheduling).
 */
export async function printHistoryBreakdown(
  title: string,
  temporal: Client,
  items: Traced[],
  stopAt?: string,
): Promise<void> {
  const seqs = new Map<string, { names: string[]; gaps: number[][] }>();
  for (const it of items) {
    const h = await temporal.workflow.getHandle(it.workflowId).fetchHistory();
    let events = (h.events ?? []).map((e) => ({
      name: eventName(e as Record<string, unknown>),
      t: tsToMs(e.eventTime),
    }));
    if (stopAt) {
      const i = events.findIndex((e) => e.name === stopAt);
      if (i >= 0) events = events.slice(0, i + 1);
    }
    const after = it.after ?? [];
    const names = [
      ...(it.requestStart !== undefined ? ['(client: request sent)'] : []),
      ...events.map((e) => e.name),
      ...after.map(([label]) => label),
      ...(it.responseEnd !== undefined ? ['(client: response received)'] : []),
    ];
    const times = [
      ...(it.requestStart !== undefined ? [it.requestStart] : []),
      ...events.map((e) => e.t),
      ...after.map(([, t]) => t),
      ...(it.responseEnd !== undefined ? [it.responseEnd] : []),
    ];
    const key = names.join('>');
    const entry = seqs.get(key) ?? { names, gaps: names.slice(1).map(() => []) };
    for (let i = 1; i < times.length; i++) entry.gaps[i - 1].push(times[i] - times[i - 1]);
    seqs.set(key, entry);
  }
  const [best] = [...seqs.values()].sort((a, b) => b.gaps[0].length - a.gaps[0].length);
  if (!best) return;
  const n = best.gaps[0]?.length ?? 0;
  console.log(`
${title}: median ms between events (${n} of ${items.length} workflows share this sequence; server timestamps have ms resolution)`);
  let total = 0;
  console.log(`  ${''.padStart(8)}  ${best.names[0]}`);
  for (let i = 1; i < best.names.length; i++) {
    const m = stats(best.gaps[i - 1]).p50;
    total += m;
    console.log(`  ${('+' + m.toFixed(1)).padStart(8)}  ${best.names[i]}`);
  }
  console.log(`  ${total.toFixed(1).padStart(8)}  (sum of the medians)`);
}
