import type { ApiDeps } from '../deps';
import { route } from '../routing';
import { checkHealth, Health } from './service';

export const healthRoutes = (deps: ApiDeps) => [
  route({
    method: 'get',
    path: '/health',
    role: 'public',
    tag: 'health',
    summary: 'Reachability of Temporal and MongoDB',
    response: Health,
    handler: async ({ ctx }) => {
      const health = await checkHealth(deps);
      // 503 so that a load balancer or orchestrator takes the process out of rotation.
      if (health.status !== 'UP') ctx.status = 503;
      ctx.body = health;
    },
  }),
];
