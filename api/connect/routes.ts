// Spark Connect endpoints: a cluster's server (start, list, stop) and its sessions (list, end). Clients'
// sessions themselves go through the gateway's port (gateway.ts), not these routes.
import { z } from 'zod';
import type { ApiDeps } from '../deps';
import { route } from '../routing';
import { ConnectServerCreation, ConnectServerInfo, ConnectSessionInfo, toServerInfo, toSessionInfo } from './schemas';
import { createServer, deleteServer, endSession, listServers, listSessions } from './service';

export const connectRoutes = (deps: ApiDeps) => [
  route({
    method: 'post',
    path: '/connect/server/:clusterId',
    role: 'operator',
    tag: 'connect',
    summary:
      "Start the cluster's Spark Connect server (sessions also start it); waits until it runs unless async; force replaces a starting one",
    body: { kind: 'json', schema: ConnectServerCreation, optional: true },
    response: z.object({ id: z.string() }),
    errors: [400, 402, 404, 409],
    handler: ({ params, body }) => createServer(deps, params.clusterId, body),
  }),
  route({
    method: 'get',
    path: '/connect/server/:clusterId',
    role: 'viewer',
    tag: 'connect',
    summary: "List the cluster's Spark Connect servers (STARTING, RUNNING or FAILED)",
    response: z.array(ConnectServerInfo),
    errors: [404],
    handler: async ({ params }) => (await listServers(deps, params.clusterId)).map(toServerInfo),
  }),
  route({
    method: 'delete',
    path: '/connect/server/:connectServerId',
    role: 'operator',
    tag: 'connect',
    summary: 'Stop a Spark Connect server (its sessions end); returns once it is stopped',
    errors: [404, 409],
    handler: ({ params }) => deleteServer(deps, params.connectServerId),
  }),
  route({
    method: 'get',
    path: '/connect/session/:clusterId',
    role: 'viewer',
    tag: 'connect',
    summary: "List the cluster's active Spark Connect sessions, newest first",
    response: z.array(ConnectSessionInfo),
    errors: [404],
    handler: async ({ params }) => (await listSessions(deps, params.clusterId)).map(toSessionInfo),
  }),
  route({
    method: 'delete',
    path: '/connect/session/:sessionId',
    role: 'operator',
    tag: 'connect',
    summary: "End a Spark Connect session: its client's next call fails saying so (within 5 s on every gateway)",
    errors: [404],
    handler: ({ params, ctx }) => endSession(deps, params.sessionId, ctx.state.principal?.id ?? 'anonymous'),
  }),
];
