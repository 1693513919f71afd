import { z } from 'zod';
import type { ApiDeps } from '../app';
import { route } from '../routing';

const Health = z.object({
  status: z.enum(['UP', 'DEGRADED']),
  temporal: z.object({ up: z.boolean(), error: z.string().optional() }),
  mongo: z.object({ up: z.boolean(), error: z.string().optional() }),
});

const probe = async (f: () => Promise<unknown>) => {
  try {
    await Promise.race([f(), new Promise((_, rej) => setTimeout(() => rej(new Error('timed out after 2s')), 2000))]);
    return { up: true };
  } catch (e) {
    return { up: false, error: (e as Error).message };
  }
};

export const healthRoutes = ({ store, temporal }: ApiDeps) => [
  route({
    method: 'get',
    path: '/health',
    tag: 'health',
    summary: 'Reachability of Temporal and MongoDB',
    response: Health,
    handler: async ({ ctx }) => {
      const [t, m] = await Promise.all([
        probe(() => temporal.workflowService.getSystemInfo({})),
        probe(() => store.db.command({ ping: 1 })),
      ]);
      const up = t.up && m.up;
      if (!up) ctx.status = 503;
      ctx.body = { status: up ? 'UP' : 'DEGRADED', temporal: t, mongo: m };
    },
  }),
];
