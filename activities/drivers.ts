// Activities that drive Spark drivers through the adapter of the job's cluster.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Job, JobLogEntry } from '../domain/types';
import type { createProjection } from './projection';
import { ClusterType } from '../domain/states';
import type { Config } from '../lib/config';
import { decryptSecret, isEncrypted } from '../lib/crypto';
import { Collections, type Store } from '../lib/mongo';
import { createK8sAdapter, type K8sCluster } from './adapters/k8s';
import { createLocalAdapter } from './adapters/local';
import { InvalidSpecError, type ClusterAdapter, type DriverSpec, type DriverStatus, type LogRange } from './adapters/types';

/** Failure types the workflows treat as permanent (nonRetryableErrorTypes). */
export const FailureType = {
  CLUSTER_NOT_FOUND: 'ClusterNotFound',
  INVALID_SPEC: 'InvalidSpec',
} as const;

type ClusterDoc = Record<string, unknown> & { name: string; type: string };

function unseal(key: string, d: ClusterDoc): ClusterDoc {
  const out: ClusterDoc = { ...d };
  for (const f of ['clientKey', 'clientKeyPassphrase', 'password']) if (isEncrypted(out[f])) out[f] = decryptSecret(key, out[f] as string);
  const storages = (out.storages ?? {}) as Record<string, Record<string, unknown>>;
  out.storages = Object.fromEntries(
    Object.entries(storages).map(([k, s]) => [
      k,
      Object.fromEntries(Object.entries(s).map(([f, v]) => [f, isEncrypted(v) ? decryptSecret(key, v as string) : v])),
    ]),
  );
  return out;
}

export function createAdapterRegistry(config: Config, store: Store) {
  const local = createLocalAdapter(config);
  // k8s adapters are cached per cluster document; a changed cluster (updatedAt) builds a new one.
  const k8s = new Map<string, { stamp: string; adapter: ClusterAdapter }>();
  return async function adapterFor(clusterName: string): Promise<ClusterAdapter> {
    const doc = await store.col<ClusterDoc>(Collections.clusters).findOne({ name: clusterName });
    if (!doc) throw ApplicationFailure.nonRetryable(`cluster '${clusterName}' does not exist`, FailureType.CLUSTER_NOT_FOUND);
    if (doc.type === ClusterType.LOCAL) return local;
    const stamp = JSON.stringify(doc);
    const cached = k8s.get(clusterName);
    if (cached && cached.stamp === stamp) return cached.adapter;
    const adapter = createK8sAdapter({ cluster: unseal(config.SECRET_KEY, doc) as unknown as K8sCluster, config });
    k8s.set(clusterName, { stamp, adapter });
    return adapter;
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

export function createDriverActivities(
  config: Config,
  adapterFor: (clusterName: string) => Promise<ClusterAdapter>,
  projection: Pick<ReturnType<typeof createProjection>, 'projectJob'>,
) {
  return {
    /**
     * Launches a driver. `starting` is the job's STARTING record with a version the workflow reserved
     * for it: writing it here, through the same versioned projection, saves the workflow a round of
     * its own before the launch.
     */
    async launchDriver(clusterName: string, spec: DriverSpec, starting?: { job: Job; version: number }): Promise<DriverStatus> {
      const [adapter] = await Promise.all([adapterFor(clusterName), starting && projection.projectJob(starting.job, starting.version)]);
      // Runners connect back to the Temporal server this worker uses.
      const full: DriverSpec =
        spec.role === 'runner'
          ? { ...spec, env: { TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE, ...spec.env } }
          : spec;
      try {
        return await adapter.launch(full);
      } catch (e) {
        if (e instanceof InvalidSpecError) throw ApplicationFailure.nonRetryable(e.message, FailureType.INVALID_SPEC);
        throw e;
      }
    },

    /**
     * Polls the driver until its phase differs from `known` (or its appId appears), heartbeating, and
     * returns the new status. Returns the unchanged status after `maxWaitMs` so histories stay bounded.
     */
    async watchDriver(clusterName: string, driverId: string, known: DriverStatus, maxWaitMs = 10 * 60_000): Promise<DriverStatus> {
      const ctx = Context.current();
      const adapter = await adapterFor(clusterName);
      const deadline = Date.now() + maxWaitMs;
      for (;;) {
        const st = await adapter.status(driverId);
        if (st.phase !== known.phase || (st.appId && st.appId !== known.appId) || Date.now() > deadline) return st;
        ctx.heartbeat(st.phase);
        await sleep(config.WATCH_INTERVAL_MS, ctx.cancellationSignal);
        if (ctx.cancellationSignal.aborted) return st;
      }
    },

    async removeDriver(clusterName: string, driverId: string): Promise<void> {
      const adapter = await adapterFor(clusterName).catch((e) => {
        // A deleted cluster leaves nothing we can remove.
        if (e instanceof ApplicationFailure && e.type === FailureType.CLUSTER_NOT_FOUND) return undefined;
        throw e;
      });
      await adapter?.remove(driverId);
    },

    async driverLogs(clusterName: string, driverIds: string[], range: LogRange): Promise<JobLogEntry[]> {
      const adapter = await adapterFor(clusterName);
      const all = await Promise.all(driverIds.map((id) => adapter.logs(id, range)));
      return all.flat();
    },
  };
}
