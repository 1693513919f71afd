// Spark Connect servers (one per cluster, the workflow `connectserver/<clusterId>`) and sessions, as the REST
// routes and the gateway use them: the API starts a server with an `ensure` update, reads the read models,
// and stops servers on request or with their cluster.
import { WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Document } from 'mongodb';
import { clusterTypeOf } from '../../activities/adapters/cluster-types';
import {
  ConnectServerState,
  connectServerWorkflowId,
  ConnectSessionState,
  parseConnectServerId,
  type ConnectServerRecord,
  type ConnectServerWorkflowInput,
  type ConnectSessionRecord,
} from '../../domain/connect';
import { SearchAttr } from '../../domain/ids';
import { clusterServiceSpec } from '../../domain/spark-defaults';
import { Collections } from '../../lib/mongo';
import {
  connectServerUsedSignal,
  ensureConnectServerUpdate,
  type connectServerWorkflow,
} from '../../workflows/connect-server';
import { checkClusterDefaults } from '../clusters/access';
import { checkCluster } from '../clusters/quota';
import { getClusterDoc, type ClusterDoc } from '../clusters/service';
import type { ApiDeps } from '../deps';
import { conflict, notFound } from '../errors';
import { stopServer } from './stop';
import type { ConnectServerCreation } from './schemas';

export const serversOf = ({ store }: Pick<ApiDeps, 'store'>) =>
  store.col<ConnectServerRecord & Document>(Collections.connectServers);
export const sessionsOf = ({ store }: Pick<ApiDeps, 'store'>) =>
  store.col<ConnectSessionRecord & Document>(Collections.connectSessions);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startOptions(deps: Pick<ApiDeps, 'config'>, cluster: ClusterDoc) {
  const { config } = deps;
  const input: ConnectServerWorkflowInput = {
    clusterId: cluster.id,
    clusterName: cluster.name,
    spark: clusterServiceSpec('spark-connect', cluster),
    idleStopMs: config.CONNECT_IDLE_MS,
    startTimeoutMs: config.CONNECT_START_TIMEOUT_MS,
    createdTime: Date.now(),
  };
  return {
    workflowId: connectServerWorkflowId(cluster.id),
    taskQueue: config.TASK_QUEUE,
    args: [input] as [ConnectServerWorkflowInput],
    workflowIdConflictPolicy: 'USE_EXISTING' as const,
    searchAttributes: {
      [SearchAttr.clusterName]: [cluster.name],
      [SearchAttr.jobType]: ['CONNECT_SERVER'],
    },
  };
}

/**
 * Starts the cluster's server unless its workflow runs, and makes sure it runs (a FAILED one is relaunched;
 * `force` replaces a STARTING one). With `wait`, returns once it is RUNNING or FAILED. Refuses (409) a cluster
 * whose type cannot run Connect servers, and (402) one whose resourceQuota a server does not fit.
 */
export async function ensureServer(
  deps: ApiDeps,
  cluster: ClusterDoc,
  opts: { force: boolean; wait: boolean },
): Promise<ConnectServerRecord> {
  if (!clusterTypeOf(cluster.type).capabilities.connect)
    throw conflict(`cluster '${cluster.name}' is of type ${cluster.type}, which cannot run Spark Connect servers`);
  checkClusterDefaults(cluster);
  const spec = clusterServiceSpec('spark-connect', cluster);
  await checkCluster(deps.store, { clusterName: cluster.name, memorySettings: spec.memorySettings });
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.temporal.workflow.executeUpdateWithStart(ensureConnectServerUpdate, {
        args: [opts],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof connectServerWorkflow>(
          'connectServerWorkflow',
          startOptions(deps, cluster),
        ),
      });
    } catch (e) {
      // One stopping right now (idle, DELETE) ends within seconds; then a new one starts.
      const stopping =
        e instanceof WorkflowUpdateFailedError && /stopping|was stopped/.test(String((e.cause as Error)?.message));
      if (!stopping || attempt >= 40)
        throw e instanceof WorkflowUpdateFailedError ? conflict(String((e.cause as Error)?.message ?? e.message)) : e;
      await sleep(250);
    }
  }
}

export const failedMessage = (r: ConnectServerRecord) =>
  `the Spark Connect server of cluster '${r.clusterName}' failed to start: ${r.error ?? 'no reason recorded'}`;

/** Tells the server's workflow a session started or called: its idle clock starts again. */
export async function serverUsed(deps: ApiDeps, clusterId: string): Promise<void> {
  await deps.temporal.workflow.getHandle(connectServerWorkflowId(clusterId)).signal(connectServerUsedSignal);
}

/** DELETE of a server: stops it and waits until its driver is gone (404 when none runs). */
export async function deleteServer(deps: ApiDeps, serverId: string): Promise<void> {
  const clusterId = parseConnectServerId(serverId);
  const gone = () => notFound(`Spark Connect server '${serverId}' does not exist`);
  if (!clusterId || !(await serversOf(deps).findOne({ _id: serverId } as Document))) throw gone();
  await stopServer(deps, clusterId, 'stopped on request').catch((e) => {
    if (e instanceof WorkflowNotFoundError) throw gone();
    throw e;
  });
}

/** POST of a server: returns at once with `async`; otherwise once it runs (409 with the reason if it failed). */
export async function createServer(
  deps: ApiDeps,
  clusterId: string,
  body: ConnectServerCreation,
): Promise<{ id: string }> {
  const cluster = await getClusterDoc(deps, clusterId);
  const r = await ensureServer(deps, cluster, { force: body.force, wait: !body.async });
  if (!body.async && r.state === ConnectServerState.FAILED) throw conflict(failedMessage(r));
  return { id: r.id };
}

/** Ends a session on request: its record says so, and every gateway refuses its next call (sessions.ts). */
export async function endSession(deps: ApiDeps, sessionId: string, by: string): Promise<void> {
  const r = await sessionsOf(deps).updateOne({ _id: sessionId, state: ConnectSessionState.ACTIVE } as Document, {
    $set: { state: ConnectSessionState.ENDED, endTime: Date.now(), endReason: `ended on request by ${by}` },
  });
  if (!r.matchedCount) throw notFound(`no active Spark Connect session '${sessionId}'`);
}

export async function listServers(deps: ApiDeps, clusterId: string): Promise<ConnectServerRecord[]> {
  await getClusterDoc(deps, clusterId);
  const docs = await serversOf(deps)
    .find({ clusterId, state: { $ne: ConnectServerState.STOPPED } })
    .toArray();
  return docs.map(({ _id, version: _v, ...r }) => r as ConnectServerRecord);
}

export async function listSessions(deps: ApiDeps, clusterId: string): Promise<ConnectSessionRecord[]> {
  await getClusterDoc(deps, clusterId);
  const docs = await sessionsOf(deps)
    .find({ clusterId, state: ConnectSessionState.ACTIVE })
    .sort({ startTime: -1 })
    .limit(deps.config.MAX_PAGE_SIZE)
    .toArray();
  return docs.map(({ _id, ...r }) => r as ConnectSessionRecord);
}
