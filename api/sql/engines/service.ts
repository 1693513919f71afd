// SQL engines (4.25 and the engine list and delete of docs/api.md): each is the workflow
// `sqlengine/<clusterId>/<type>`; the API starts it with an `ensure` update and reads its record.
import { WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Document } from 'mongodb';
import { SearchAttr } from '../../../domain/ids';
import { clusterServiceSpec } from '../../../domain/spark-defaults';
import {
  parseSqlEngineId,
  sqlEngineId,
  SqlEngineState,
  sqlEngineWorkflowId,
  type SqlEngineRecord,
  type SqlEngineWorkflowInput,
} from '../../../domain/sql-engine';
import type { SqlEngineCreation, SqlEngineInfo } from '../../../domain/sql';
import type { SqlEngine } from '../../../domain/states';
import { Collections } from '../../../lib/mongo';
import type { sqlEngineWorkflow } from '../../../workflows/sql-engine';
import { ensureEngineUpdate } from '../../../workflows/sql-engine';
import { checkClusterDefaults } from '../../clusters/access';
import { clusterTypeOf } from '../../../activities/adapters/cluster-types';
import { getClusterDoc, type ClusterDoc } from '../../clusters/service';
import type { ApiDeps } from '../../deps';
import { conflict, notFound } from '../../errors';
import { engineLinks } from '../../spark-ui/links';
import { stopEngine } from './stop';

const enginesOf = ({ store }: Pick<ApiDeps, 'store'>) => store.col<SqlEngineRecord & Document>(Collections.sqlEngines);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function engineStartOptions(deps: Pick<ApiDeps, 'config'>, cluster: ClusterDoc, type: SqlEngine) {
  const { config } = deps;
  const input: SqlEngineWorkflowInput = {
    clusterId: cluster.id,
    clusterName: cluster.name,
    type,
    spark: clusterServiceSpec(`sql-engine-${type.toLowerCase()}`, cluster),
    idleStopMs: config.SQL_ENGINE_IDLE_MS,
    startTimeoutMs: config.SQL_ENGINE_START_TIMEOUT_MS,
    createdTime: Date.now(),
  };
  return {
    workflowId: sqlEngineWorkflowId(cluster.id, type),
    taskQueue: config.TASK_QUEUE,
    args: [input] as [SqlEngineWorkflowInput],
    workflowIdConflictPolicy: 'USE_EXISTING' as const,
    searchAttributes: {
      [SearchAttr.sqlEngine]: [sqlEngineId(cluster.id, type)],
      [SearchAttr.clusterName]: [cluster.name],
      [SearchAttr.jobType]: ['SQL_ENGINE'],
    },
  };
}

/**
 * Starts the cluster's engine of this type unless its workflow runs, and makes sure it runs (a FAILED one
 * is relaunched; `force` replaces a STARTING one). With `wait`, returns once it is RUNNING or FAILED.
 * An engine that is stopping right now (idle, DELETE) ends within seconds; the call then starts a new one.
 */
export async function ensureEngine(
  deps: ApiDeps,
  cluster: ClusterDoc,
  type: SqlEngine,
  opts: { force: boolean; wait: boolean },
): Promise<SqlEngineRecord> {
  // What the cluster's type can launch (its capabilities, activities/adapters/<type>/cluster-type.ts).
  if (!clusterTypeOf(cluster.type).capabilities.sqlEngines.includes(type))
    throw conflict(`cluster '${cluster.name}' is of type ${cluster.type}, which cannot run ${type} engines`);
  // An engine runs with the cluster's defaults: one stored before the access rule may hold a refused setting.
  checkClusterDefaults(cluster);
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.temporal.workflow.executeUpdateWithStart(ensureEngineUpdate, {
        args: [opts],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof sqlEngineWorkflow>(
          'sqlEngineWorkflow',
          engineStartOptions(deps, cluster, type),
        ),
      });
    } catch (e) {
      const stopping =
        e instanceof WorkflowUpdateFailedError && /stopping|was stopped/.test(String((e.cause as Error)?.message));
      if (!stopping || attempt >= 40)
        throw e instanceof WorkflowUpdateFailedError ? conflict(String((e.cause as Error)?.message ?? e.message)) : e;
      await sleep(250);
    }
  }
}

const failedMessage = (r: SqlEngineRecord) =>
  `the ${r.type} engine on cluster '${r.clusterName}' failed to start: ${r.error ?? 'no reason recorded'}`;

/** 4.25: returns at once with `async`; otherwise once the engine runs (409 with the reason if it failed). */
export async function createEngine(deps: ApiDeps, clusterId: string, body: SqlEngineCreation): Promise<{ id: string }> {
  const cluster = await getClusterDoc(deps, clusterId);
  const r = await ensureEngine(deps, cluster, body.type, { force: body.force, wait: !body.async });
  if (!body.async && r.state === SqlEngineState.FAILED) throw conflict(failedMessage(r));
  return { id: r.id };
}

export async function listEngines(deps: ApiDeps, clusterId: string): Promise<SqlEngineInfo[]> {
  await getClusterDoc(deps, clusterId);
  const docs = await enginesOf(deps)
    .find({ clusterId, state: { $ne: SqlEngineState.STOPPED } })
    .sort({ type: 1 })
    .toArray();
  return docs.map((d) => ({ id: d.id, type: d.type, state: d.state as SqlEngineInfo['state'], ...engineLinks(d) }));
}

/** Stops an engine and waits until its driver is gone. */
export async function deleteEngine(deps: ApiDeps, engineId: string): Promise<void> {
  const parsed = parseSqlEngineId(engineId);
  const gone = () => notFound(`SQL engine '${engineId}' does not exist`);
  if (!parsed || !(await enginesOf(deps).findOne({ _id: engineId } as Document))) throw gone();
  await stopEngine(deps, parsed.clusterId, parsed.type, 'deleted on request').catch((e) => {
    if (e instanceof WorkflowNotFoundError) throw gone();
    throw e;
  });
}

/** The running engine's record, from the read model (undefined when none runs). */
export async function runningEngine(
  deps: ApiDeps,
  clusterId: string,
  type: SqlEngine,
): Promise<SqlEngineRecord | undefined> {
  const r = await enginesOf(deps).findOne({ _id: sqlEngineId(clusterId, type) } as Document);
  return r?.state === SqlEngineState.RUNNING && r.endpoint ? r : undefined;
}

export { failedMessage };
