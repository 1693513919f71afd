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
// The messages are defined here (the API uses them by these names); what they do is in engine-entity.ts
// (the state machine both share) with connect-server-entity.ts (what a Connect server is).
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ConnectServerRecord, ConnectServerWorkflowInput } from '../domain/connect';
import { runEngineWorkflow } from './engine-entity';
import { CONNECT_SERVER } from './connect-server-entity';

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
  const messages = {
    query: connectServerQuery,
    ensure: ensureConnectServerUpdate,
    stop: stopConnectServerUpdate,
    used: connectServerUsedSignal,
  };
  await runEngineWorkflow(CONNECT_SERVER, messages, input);
}
