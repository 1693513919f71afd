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
// The messages are defined here (the API uses them by these names); what they do is in SqlEngineEntity.
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  isCancellation,
  setHandler,
} from '@temporalio/workflow';
import type { SqlEngineRecord, SqlEngineWorkflowInput } from '../domain/sql-engine';
import { SqlEngineEntity } from './sql-engine-entity';

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
  const e = new SqlEngineEntity(input);
  setHandler(engineQuery, () => e.record);
  setHandler(ensureEngineUpdate, (opts) => e.ensure(opts), { validator: (_opts) => e.checkNotStopping() });
  setHandler(stopEngineUpdate, (reason) => e.requestStop(reason));
  setHandler(engineUsedSignal, () => e.used());

  try {
    await e.begin();
    for (;;) {
      const next = await e.step();
      if (next === 'stopped') break;
      if (next === 'continue-as-new') {
        await condition(allHandlersFinished);
        await continueAsNew<typeof sqlEngineWorkflow>(e.continueInput());
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled by an operator (Temporal UI): the engine must not outlive its workflow.
    await CancellationScope.nonCancellable(() => e.stopNow('workflow cancelled'));
    throw err;
  }
  await condition(allHandlersFinished);
}
