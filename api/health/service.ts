// Health: whether Temporal and MongoDB answer within 2 s. The endpoint is public, so a failure is one fixed
// word per dependency; what went wrong (exception text, addresses) goes to the log only.
import { z } from 'zod';
import { logger } from '../../lib/log';
import type { ApiDeps } from '../deps';

const log = logger('health');

const Probe = z.object({ up: z.boolean(), error: z.literal('unreachable').optional() });
type Probe = z.infer<typeof Probe>;

export const Health = z.object({ status: z.enum(['UP', 'DEGRADED']), temporal: Probe, mongo: Probe });
export type Health = z.infer<typeof Health>;

const TIMEOUT_MS = 2000;
// Probes come every few seconds from each load balancer and orchestrator: one log line per dependency a minute.
const lastLogged = new Map<string, number>();

async function probe(name: string, f: () => Promise<unknown>): Promise<Probe> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      f(),
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      }),
    ]);
    return { up: true };
  } catch (err) {
    if ((lastLogged.get(name) ?? 0) < Date.now() - 60_000) {
      lastLogged.set(name, Date.now());
      log.warn(`health check: ${name} is unreachable`, { err });
    }
    return { up: false, error: 'unreachable' };
  } finally {
    clearTimeout(timer);
  }
}

export async function checkHealth({ store, temporal }: Pick<ApiDeps, 'store' | 'temporal'>): Promise<Health> {
  const [t, m] = await Promise.all([
    probe('temporal', () => temporal.workflowService.getSystemInfo({})),
    probe('mongodb', () => store.db.command({ ping: 1 })),
  ]);
  return { status: t.up && m.up ? 'UP' : 'DEGRADED', temporal: t, mongo: m };
}
