// Stopping SQL engines: on request, and when their cluster is deleted (imported by the clusters feature,
// so it imports nothing of it).
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Document } from 'mongodb';
import { sqlEngineWorkflowId, type SqlEngineRecord } from '../../../domain/sql-engine';
import type { SqlEngine } from '../../../domain/states';
import { Collections } from '../../../lib/mongo';
import { stopEngineUpdate } from '../../../workflows/sql-engine';
import type { ApiDeps } from '../../deps';

export async function stopEngine(deps: ApiDeps, clusterId: string, type: SqlEngine, reason: string): Promise<void> {
  try {
    await deps.temporal.workflow
      .getHandle(sqlEngineWorkflowId(clusterId, type))
      .executeUpdate(stopEngineUpdate, { args: [reason] });
  } finally {
    // This process's statements must not try it again in the seconds its record stays cached.
    deps.sql?.stopped(clusterId, type);
  }
}

/** Stops every engine of a cluster that is being deleted. */
export async function stopClusterEngines(deps: ApiDeps, clusterId: string): Promise<void> {
  const docs = await deps.store.col<SqlEngineRecord & Document>(Collections.sqlEngines).find({ clusterId }).toArray();
  await Promise.all(
    docs.map((d) =>
      stopEngine(deps, clusterId, d.type, 'its cluster was deleted').catch((e) => {
        if (!(e instanceof WorkflowNotFoundError)) throw e;
      }),
    ),
  );
}
