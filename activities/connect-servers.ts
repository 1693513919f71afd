// Activities of the Spark Connect server workflow beyond the driver ones it shares with jobs (launch, watch,
// remove): waiting until a launched server listens. Its read-model record is written by projection.ts.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { isFinalPhase } from '../domain/driver';
import type { EngineEndpoint } from '../domain/sql-engine';
import type { Config } from '../lib/config';
import { tcpAccepts } from './adapters/engine-probe';
import type { AdapterLookup } from './adapters/registry';
import { ADAPTER_MAX_AGE_MS } from './drivers';
import { ENGINE_FAILED } from './sql-engines';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createConnectServerActivities(config: Config, adapterFor: AdapterLookup) {
  return {
    /**
     * Waits until the server's driver runs and its gRPC port accepts connections (Spark Connect opens it once
     * its SparkSession is up). One that ends, or does not listen within `timeoutMs`, is a non-retryable
     * EngineFailed failure whose message carries the end of its log.
     */
    async awaitConnectServerReady(clusterName: string, driverId: string, timeoutMs: number): Promise<EngineEndpoint> {
      const ctx = Context.current();
      const deadline = Date.now() + timeoutMs;
      const why = async (what: string, message?: string) => {
        const adapter = await adapterFor(clusterName);
        const logs = await adapter.logs(driverId, { from: 0, size: 100_000 }).catch(() => []);
        const last = logs
          .flatMap((l) => l.log)
          .filter((l) => l.trim())
          .slice(-12)
          .join('\n');
        return `${what}${message ? `: ${message}` : ''}${last ? `\n${last}` : ''}`;
      };
      for (;;) {
        const adapter = await adapterFor(clusterName, { maxAgeMs: ADAPTER_MAX_AGE_MS });
        const st = await adapter.status(driverId);
        if (isFinalPhase(st.phase) || st.phase === 'MISSING') {
          const what = 'the Spark Connect server ended before it listened';
          throw ApplicationFailure.nonRetryable(await why(what, st.message), ENGINE_FAILED);
        }
        if (st.endpoint && (await tcpAccepts(st.endpoint, 2_000))) return st.endpoint;
        if (Date.now() > deadline) {
          const what = `the Spark Connect server did not listen within ${Math.round(timeoutMs / 1000)} s (CONNECT_START_TIMEOUT_MS)`;
          throw ApplicationFailure.nonRetryable(await why(what, st.message), ENGINE_FAILED);
        }
        ctx.heartbeat(st.phase);
        await sleep(Math.min(250, config.WATCH_INTERVAL_MS));
        if (ctx.cancellationSignal.aborted) throw ApplicationFailure.nonRetryable('cancelled', 'Cancelled');
      }
    },
  };
}
