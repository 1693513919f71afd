// Health: whether Temporal and MongoDB answer within 2 s.
import { z } from 'zod';
import type { ApiDeps } from '../deps';

const Probe = z.object({ up: z.boolean(), error: z.string().optional() });
type Probe = z.infer<typeof Probe>;

export const Health = z.object({ status: z.enum(['UP', 'DEGRADED']), temporal: Probe, mongo: Probe });
export type Health = z.infer<typeof Health>;

async function probe(f: () => Promise<unknown>): Promise<Probe> {
  try {
    await Promise.race([f(), new Promise((_, rej) => setTimeout(() => rej(new Error('timed out after 2s')), 2000))]);
    return { up: true };
  } catch (e) {
    return { up: false, error: (e as Error).message };
  }
}

export async function checkHealth({ store, temporal }: Pick<ApiDeps, 'store' | 'temporal'>): Promise<Health> {
  const [t, m] = await Promise.all([
    probe(() => temporal.workflowService.getSystemInfo({})),
    probe(() => store.db.command({ ping: 1 })),
  ]);
  return { status: t.up && m.up ? 'UP' : 'DEGRADED', temporal: t, mongo: m };
}
