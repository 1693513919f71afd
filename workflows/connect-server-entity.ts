// What makes an engine a Spark Connect server (the state machine is engine-entity.ts, the messages, diagram
// and workflow function are in connect-server.ts): one per cluster, a driver of role connect-server answering
// on its gRPC port, the connectServers record; the gateway's `used` signals (a session started or called)
// keep it alive.
import {
  connectServerDriverId,
  connectServerId,
  ConnectServerState,
  type ConnectServerRecord,
  type ConnectServerWorkflowInput,
} from '../domain/connect';
import { entityProjection } from './activity-options';
import type { EngineKind } from './engine-entity';

export const CONNECT_SERVER: EngineKind<ConnectServerWorkflowInput, ConnectServerRecord> = {
  newRecord: (input) => ({
    id: connectServerId(input.clusterId),
    clusterId: input.clusterId,
    clusterName: input.clusterName,
    state: ConnectServerState.STARTING,
    generation: 0,
    createdTime: input.createdTime,
  }),
  driverId: ({ clusterId, createdTime }, generation) => connectServerDriverId(clusterId, generation, createdTime),
  spec: ({ clusterId, spark }, record, driverId) => ({
    driverId,
    role: 'connect-server',
    spark,
    env: {},
    labels: { connectServerId: record.id, clusterId },
  }),
  awaitReady: (sets, { clusterName, startTimeoutMs }, driverId) =>
    sets.engineStart(startTimeoutMs).awaitConnectServerReady(clusterName, driverId, startTimeoutMs),
  search: ({ clusterName }) => ({ clusterName, jobType: 'CONNECT_SERVER' }),
  project: (record, version) => entityProjection.projectConnectServer(record, version),
  deleteRecord: (id) => entityProjection.deleteConnectServerRecord(id),
  // Written before the record goes, so the server stream shows the stop (a delete is not streamed).
  writesStop: true,
  text: {
    name: 'the Spark Connect server',
    stopping: () => 'the Spark Connect server',
    idle: (seconds) => `no session for ${seconds} s (CONNECT_IDLE_MS)`,
  },
};
