// Spark Connect server workflow `connectserver/<clusterId>`: keeps one Spark Connect server per cluster, as
// SQL engines are kept (sql-engine.ts). Clients' sessions reach it through the API's gateway (api/connect/),
// which signals `used` as sessions start and call; this workflow owns its lifecycle.
//
//   STARTING ──(driver launched and answering)──▶ RUNNING ──(driver died)──▶ STARTING (next generation)
//      │  └── force ──▶ STARTING (the starting one removed)      │  └── died 3× within 5 min ──▶ FAILED
//      └──(ended, or silent past the start timeout)──▶ FAILED ──(ensure)──▶ STARTING
//   any state ──(stop: DELETE, cluster deleted, idle past CONNECT_IDLE_MS: no session)──▶ driver removed, record
//   deleted, workflow ends.
//
// The messages are defined here (the API uses them by these names); what they do is in ConnectServerEntity.
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
import type { ConnectServerRecord, ConnectServerWorkflowInput } from '../domain/connect';
import { ConnectServerEntity } from './connect-server-entity';

/**
 * Makes sure the server runs: relaunches a FAILED one, and with `force` replaces one that is STARTING.
 * With `wait` it resolves once the server is RUNNING or FAILED; without, at once. Resolves with the record.
 */
export const ensureConnectServerUpdate = defineUpdate<ConnectServerRecord, [{ force: boolean; wait: boolean }]>(
  'ensure',
);
/** Stops the server and ends the workflow; resolves once the driver is removed. */
export const stopConnectServerUpdate = defineUpdate<void, [string]>('stop');
/** Sent by the gateway as sessions start and call: resets the idle clock. */
export const connectServerUsedSignal = defineSignal('used');
export const connectServerQuery = defineQuery<ConnectServerRecord>('engine');

export async function connectServerWorkflow(input: ConnectServerWorkflowInput): Promise<void> {
  const e = new ConnectServerEntity(input);
  setHandler(connectServerQuery, () => e.record);
  setHandler(ensureConnectServerUpdate, (opts) => e.ensure(opts), { validator: (_opts) => e.checkNotStopping() });
  setHandler(stopConnectServerUpdate, (reason) => e.requestStop(reason));
  setHandler(connectServerUsedSignal, () => e.used());

  try {
    await e.begin();
    for (;;) {
      const next = await e.step();
      if (next === 'stopped') break;
      if (next === 'continue-as-new') {
        await condition(allHandlersFinished);
        await continueAsNew<typeof connectServerWorkflow>(e.continueInput());
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled by an operator (Temporal UI): the server must not outlive its workflow.
    await CancellationScope.nonCancellable(() => e.stopNow('workflow cancelled'));
    throw err;
  }
  await condition(allHandlersFinished);
}
