// Activities of the SQL engine workflow beyond the driver ones it shares with jobs (launch, watch, remove):
// waiting until a launched engine answers its protocol. Its read-model record is written by projection.ts.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { isFinalPhase, type DriverStatus } from '../domain/driver';
import type { EngineEndpoint } from '../domain/sql-engine';
import type { SqlEngine } from '../domain/states';
import type { Config } from '../lib/config';
import { probeEngine } from './adapters/engine-probe';
import type { AdapterLookup } from './adapters/registry';
import { ADAPTER_MAX_AGE_MS } from './drivers';

/** ApplicationFailure type of an engine that ended or never answered: retrying the same launch will not help. */
export const ENGINE_FAILED = 'EngineFailed';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The last lines of a driver's log that say something, for the engine's `error`. */
function tail(lines: string[], n = 12): string {
  return lines
    .filter((l) => l.trim())
    .slice(-n)
    .join('\n');
}

export function createSqlEngineActivities(config: Config, adapterFor: AdapterLookup) {
  const why = async (clusterName: string, driverId: string, st: DriverStatus, what: string) => {
    const adapter = await adapterFor(clusterName);
    const logs = await adapter.logs(driverId, { from: 0, size: 100_000 }).catch(() => []);
    const last = tail(logs.flatMap((l) => l.log));
    return `${what}${st.message ? `: ${st.message}` : ''}${last ? `\n${last}` : ''}`;
  };

  return {
    /**
     * Waits until the engine's driver runs and its endpoint answers the engine's protocol. An engine
     * that ends, or does not answer within `timeoutMs`, is a non-retryable EngineFailed failure whose
     * message carries the end of its log.
     */
    async awaitEngineReady(
      clusterName: string,
      driverId: string,
      type: SqlEngine,
      timeoutMs: number,
    ): Promise<EngineEndpoint> {
      const ctx = Context.current();
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // Asked on every poll, as watches do (drivers.ts): a changed cluster is polled through its new connection.
        const adapter = await adapterFor(clusterName, { maxAgeMs: ADAPTER_MAX_AGE_MS });
        const st = await adapter.status(driverId);
        if (isFinalPhase(st.phase) || st.phase === 'MISSING') {
          throw ApplicationFailure.nonRetryable(
            await why(clusterName, driverId, st, `the ${type} engine ended before it listened`),
            ENGINE_FAILED,
          );
        }
        if (st.endpoint && (await probeEngine(type, st.endpoint, 2_000))) return st.endpoint;
        if (Date.now() > deadline) {
          const what = `the ${type} engine did not answer within ${Math.round(timeoutMs / 1000)} s (SQL_ENGINE_START_TIMEOUT_MS)`;
          throw ApplicationFailure.nonRetryable(await why(clusterName, driverId, st, what), ENGINE_FAILED);
        }
        ctx.heartbeat(st.phase);
        await sleep(Math.min(250, config.WATCH_INTERVAL_MS));
        if (ctx.cancellationSignal.aborted) throw ApplicationFailure.nonRetryable('cancelled', 'Cancelled');
      }
    },
  };
}
