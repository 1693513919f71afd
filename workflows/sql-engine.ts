// SQL engine workflow `sqlengine/<clusterId>/<type>`: keeps one engine (Spark Thrift Server or Trino) per
// cluster and type, as Kyuubi's server share level does. The API runs statements on it directly; this
// workflow owns its lifecycle.
//
//   STARTING ──(driver launched and answering)──▶ RUNNING ──(driver died)──▶ STARTING (next generation)
//      │  └── force ──▶ STARTING (the starting one removed)      │  └── died 3× within 5 min ──▶ FAILED
//      └──(ended, or silent past the start timeout)──▶ FAILED ──(ensure)──▶ STARTING
//   any state ──(stop: DELETE, cluster deleted, idle past SQL_ENGINE_IDLE_MS)──▶ driver removed, record
//   deleted, workflow ends.
//
// The messages are defined here (the API uses them by these names); what they do is in engine-entity.ts
// (the state machine both share) with sql-engine-entity.ts (what an SQL engine is).
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SqlEngineRecord, SqlEngineWorkflowInput } from '../domain/sql-engine';
import { runEngineWorkflow } from './engine-entity';
import { SQL_ENGINE } from './sql-engine-entity';

/**
 * Makes sure the engine runs: relaunches a FAILED one, and with `force` replaces one that is STARTING.
 * With `wait` it resolves once the engine is RUNNING or FAILED; without, at once. Resolves with the record.
 */
export const ensureEngineUpdate = defineUpdate<SqlEngineRecord, [{ force: boolean; wait: boolean }]>('ensure');
/** Stops the engine and ends the workflow; resolves once the driver is removed. */
export const stopEngineUpdate = defineUpdate<void, [string]>('stop');
/** Sent by the API when it runs statements on the engine: resets the idle clock. */
export const engineUsedSignal = defineSignal('used');
export const engineQuery = defineQuery<SqlEngineRecord>('engine');

export async function sqlEngineWorkflow(input: SqlEngineWorkflowInput): Promise<void> {
  const messages = { query: engineQuery, ensure: ensureEngineUpdate, stop: stopEngineUpdate, used: engineUsedSignal };
  await runEngineWorkflow(SQL_ENGINE, messages, input);
}
