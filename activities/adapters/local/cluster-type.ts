// The `local` cluster type: drivers are spark-submit processes on the worker's host (adapter.ts, built by
// ../cluster-adapters.ts).
import { z } from 'zod';
import { jvmMemoryBytes } from '../../../domain/delimited';
import { SqlEngine } from '../../../domain/states';
import type { ClusterTypeDef } from '../cluster-type';
import type { Config } from '../../../lib/config';

export const localSettings = {
  /** N of `local[N]` for its drivers (Ilum's localCluster); default LOCAL_SPARK_THREADS. */
  threads: z.number().int().min(1).max(1024).optional(),
};

/** Its fields of the Cluster resource. */
export const localView = {
  /** N of `local[N]` of its drivers. */
  threads: z.number().int().optional(),
};

export const threadsOf = (c: { threads?: number }, config: Pick<Config, 'LOCAL_SPARK_THREADS'>) =>
  c.threads ?? config.LOCAL_SPARK_THREADS;

const jvm = (v: string | undefined) => jvmMemoryBytes(v ?? '1g');

export const localType: ClusterTypeDef<typeof localSettings> = {
  title: "spark-submit on the worker's host",
  settings: localSettings,
  view: localView,
  check: () => {},
  defaults: (c) => ({ url: c.url || 'local' }),
  sparkMaster: (c, config) => `local[${threadsOf(c, config)}]`,
  sparkDeployMode: 'client',
  toView: (c, config) => ({ threads: threadsOf(c, config) }),
  // Drivers are host processes: no Spark setting reaches beyond them.
  refusedConf: () => undefined,
  quotaNeed: (m, instances) => ({
    cpu: instances * (m.driverCores ?? 1),
    memory: instances * jvm(m.driverMemory),
    pods: instances,
  }),
  countsPods: false,
  capabilities: {
    namespaces: false,
    sqlEngines: [SqlEngine.SPARK_SQL, SqlEngine.TRINO],
    connect: true,
    driversOnWorkerHost: true,
    sparkUi: 'driver-folder',
  },
};
