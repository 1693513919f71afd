// What makes an engine an SQL engine (the state machine is engine-entity.ts, the messages, diagram and
// workflow function are in sql-engine.ts): one per cluster and type, a driver of role sql-engine answering
// on HiveServer2 Thrift (SPARK_SQL) or Trino's HTTP port (TRINO), the sqlEngines record, deleted on stop.
import {
  sqlEngineDriverId,
  sqlEngineId,
  SqlEngineState,
  type SqlEngineRecord,
  type SqlEngineWorkflowInput,
} from '../domain/sql-engine';
import { entityProjection } from './activity-options';
import type { EngineKind } from './engine-entity';

export const SQL_ENGINE: EngineKind<SqlEngineWorkflowInput, SqlEngineRecord> = {
  newRecord: (input) => ({
    id: sqlEngineId(input.clusterId, input.type),
    clusterId: input.clusterId,
    clusterName: input.clusterName,
    type: input.type,
    state: SqlEngineState.STARTING,
    generation: 0,
    createdTime: input.createdTime,
  }),
  driverId: ({ clusterId, type, createdTime }, generation) =>
    sqlEngineDriverId(clusterId, type, generation, createdTime),
  spec: ({ clusterId, type, spark }, record, driverId) => ({
    driverId,
    role: 'sql-engine',
    engine: { type, stateKey: clusterId },
    spark,
    env: {},
    labels: { sqlEngineId: record.id, clusterId },
  }),
  awaitReady: (sets, { clusterName, type, startTimeoutMs }, driverId) =>
    sets.engineStart(startTimeoutMs).awaitEngineReady(clusterName, driverId, type, startTimeoutMs),
  search: ({ clusterName }, record) => ({ clusterName, sqlEngine: record.id, jobType: 'SQL_ENGINE' }),
  project: (record, version) => entityProjection.projectSqlEngine(record, version),
  deleteRecord: (id) => entityProjection.deleteSqlEngineRecord(id),
  // The record just goes: the engines' list is read, not streamed.
  writesStop: false,
  text: {
    name: 'the engine',
    stopping: ({ type }) => `the ${type} engine`,
    idle: (seconds) => `idle for ${seconds} s (SQL_ENGINE_IDLE_MS)`,
  },
};
