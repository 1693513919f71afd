// SSE endpoints of the streams, declared like every other route (so they appear in the OpenAPI document).
import { route } from '../routing';
import { STREAMS } from './catalog';
import type { Feeds } from './feed';
import { sse } from './sse';

/** SSE endpoints. Each event: `id: <resume token>`, `event: <the stream's event>`, `data: <resource JSON>`. */
export const streamRoutes = (feeds: Feeds) =>
  STREAMS.map((s) =>
    route({
      method: 'get',
      path: s.path,
      role: s.role,
      tag: 'streams',
      summary: `${s.what}, as Server-Sent Events (also Socket.IO namespace ${s.namespace}, event '${s.event}')`,
      query: [...s.query],
      errors: [400, 409],
      handler: async ({ ctx, query }) => sse(ctx, feeds[s.feed], s.filter(query), s.event, s.render, feeds.limits),
    }),
  );
