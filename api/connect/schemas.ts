// Shapes of the Spark Connect routes and streams (one source: handlers, the OpenAPI document and tests).
import { z } from 'zod';
import { connectServerLinks } from '../spark-ui/links';
import type { ConnectServerRecord, ConnectSessionRecord } from '../../domain/connect';

export const ConnectServerCreation = z
  .object({
    /** Answer at once instead of when the server runs. */
    async: z.boolean().default(false),
    /** Replace a server that is STARTING. */
    force: z.boolean().default(false),
  })
  .strict();
export type ConnectServerCreation = z.infer<typeof ConnectServerCreation>;

/** A cluster's Spark Connect server (its gRPC endpoint stays internal: clients use the gateway). */
export const ConnectServerInfo = z.object({
  id: z.string(),
  clusterId: z.string(),
  clusterName: z.string(),
  state: z.enum(['STARTING', 'RUNNING', 'FAILED', 'STOPPED']),
  /** Counts the server's launches: a restart after its driver died is the next generation. */
  generation: z.number().int(),
  /** Why it failed to start, was last restarted, or stopped. */
  error: z.string().optional(),
  startTime: z.number().int().optional(),
  createdTime: z.number().int(),
  /** While RUNNING: its live Spark UI and its (in-progress) run in the History Server, through the API. */
  uiUrl: z.string().optional(),
  historyUrl: z.string().optional(),
});
export type ConnectServerInfo = z.infer<typeof ConnectServerInfo>;

export const ConnectSessionInfo = z.object({
  id: z.string(),
  clusterId: z.string(),
  clusterName: z.string(),
  serverId: z.string(),
  /** Who opened it; only they may use it. */
  principal: z.string(),
  state: z.enum(['ACTIVE', 'ENDED']),
  startTime: z.number().int(),
  /** When it last called, as the gateway last recorded it (at most 30 s behind). */
  lastUsed: z.number().int(),
  calls: z.number().int(),
  endTime: z.number().int().optional(),
  endReason: z.string().optional(),
});
export type ConnectSessionInfo = z.infer<typeof ConnectSessionInfo>;

export const toServerInfo = (r: ConnectServerRecord): ConnectServerInfo => ({
  id: r.id,
  clusterId: r.clusterId,
  clusterName: r.clusterName,
  state: r.state,
  generation: r.generation,
  ...(r.error !== undefined ? { error: r.error } : {}),
  ...(r.startTime !== undefined ? { startTime: r.startTime } : {}),
  createdTime: r.createdTime,
  ...connectServerLinks(r),
});

export const toSessionInfo = (r: ConnectSessionRecord): ConnectSessionInfo => ({
  id: r.id,
  clusterId: r.clusterId,
  clusterName: r.clusterName,
  serverId: r.serverId,
  principal: r.principal,
  state: r.state,
  startTime: r.startTime,
  lastUsed: r.lastUsed,
  calls: r.calls,
  ...(r.endTime !== undefined ? { endTime: r.endTime } : {}),
  ...(r.endReason !== undefined ? { endReason: r.endReason } : {}),
});
