// Stopping Spark Connect servers: on request, and when their cluster is deleted (imported by the clusters
// feature, so it imports nothing of it).
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Document } from 'mongodb';
import { connectServerId, connectServerWorkflowId, type ConnectServerRecord } from '../../domain/connect';
import { Collections } from '../../lib/mongo';
import { stopConnectServerUpdate } from '../../workflows/connect-server';
import type { ApiDeps } from '../deps';

export async function stopServer(deps: ApiDeps, clusterId: string, reason: string): Promise<void> {
  await deps.temporal.workflow
    .getHandle(connectServerWorkflowId(clusterId))
    .executeUpdate(stopConnectServerUpdate, { args: [reason] });
}

/** Stops the server of a cluster that is being deleted. */
export async function stopClusterServers(deps: ApiDeps, clusterId: string): Promise<void> {
  if (
    !(await deps.store
      .col<ConnectServerRecord & Document>(Collections.connectServers)
      .findOne({ _id: connectServerId(clusterId) } as Document))
  )
    return;
  await stopServer(deps, clusterId, 'its cluster was deleted').catch((e) => {
    if (!(e instanceof WorkflowNotFoundError)) throw e;
  });
}
