// The `yarn` cluster type: drivers are YARN applications in cluster deploy mode (adapter.ts, built by
// ../cluster-adapters.ts), on an existing
// Hadoop YARN cluster reached at its ResourceManager. No Kerberos.
import { z } from 'zod';
import { jvmMemoryBytes } from '../../../domain/delimited';
import { executorsOf, type ClusterTypeDef } from '../cluster-type';
import { checkHttpUrl, temporalAddressSetting } from '../k8s/cluster-type';
import { hadoopConfProblems, refusedYarnConf } from './hadoop-conf';
import { yarnRest } from './rest';
import { sweepYarnFolders } from './retention';

export const yarnSettings = {
  /** host:port of the ResourceManager's client (IPC) address; default the url's host on port 8032. */
  resourceManagerAddress: z
    .string()
    .trim()
    .max(512)
    .regex(/^$|^[A-Za-z0-9.-]+:[0-9]{1,5}$/, 'must be host:port of the ResourceManager, e.g. rm.example.com:8032')
    .optional(),
  /** Hadoop properties of the cluster's client (core-site and yarn-site), checked by hadoop-conf.ts. */
  hadoopConf: z.record(z.string().max(256), z.string().max(4096)).optional(),
  /** The YARN queue of its drivers (default `default`): the cluster's share of YARN, its quota. */
  queue: z
    .string()
    .trim()
    .max(255)
    .regex(/^$|^[A-Za-z0-9_.-]+$/, 'must be a queue name (letters, digits, _ . -), e.g. root.analytics')
    .optional(),
  temporalAddress: temporalAddressSetting,
};

/** Its fields of the Cluster resource. */
export const yarnView = {
  /** host:port of the ResourceManager's client address, when set (else the url's host, port 8032). */
  resourceManagerAddress: z.string().optional(),
  /** Hadoop properties of the cluster's client (core-site, yarn-site). */
  hadoopConf: z.record(z.string(), z.string()).optional(),
  /** The queue of its drivers. */
  queue: z.string().optional(),
  /** The Temporal frontend as the nodes reach it (group runners). */
  temporalAddress: z.string().optional(),
};

const jvm = (v: string | undefined) => jvmMemoryBytes(v ?? '1g');
/** YARN sizes a container as the JVM's memory plus its overhead: 10%, at least 384 MiB (Spark's default). */
const container = (v: string | undefined) => jvm(v) + Math.max(384 * 2 ** 20, Math.round(jvm(v) * 0.1));

export const yarnType: ClusterTypeDef<typeof yarnSettings> = {
  title: 'YARN applications on Hadoop YARN',
  url: 'ResourceManager web address',
  settings: yarnSettings,
  view: yarnView,
  check: (c, ctx) => {
    checkHttpUrl(c, ctx, 'yarn', 'ResourceManager web address');
    let host: string | undefined;
    try {
      host = c.url ? new URL(c.url).hostname : undefined;
    } catch {
      host = undefined;
    }
    const rm = /^([A-Za-z0-9.-]+):/.exec(c.resourceManagerAddress ?? '')?.[1];
    if (rm && host && rm.toLowerCase() !== host.toLowerCase())
      ctx.addIssue({
        code: 'custom',
        path: ['resourceManagerAddress'],
        message: `names host ${rm}, not the ResourceManager's of the url (${host})`,
      });
    for (const [key, message] of hadoopConfProblems(c.hadoopConf ?? {}, host))
      ctx.addIssue({ code: 'custom', path: ['hadoopConf', key], message });
  },
  defaults: () => ({}),
  sparkMaster: () => 'yarn',
  sparkDeployMode: 'cluster',
  toView: (c) => ({
    resourceManagerAddress: c.resourceManagerAddress || undefined,
    hadoopConf: c.hadoopConf,
    queue: c.queue || 'default',
    temporalAddress: c.temporalAddress || undefined,
  }),
  refusedConf: (c, conf, field) => {
    const refused = refusedYarnConf(conf);
    if (!refused.length) return undefined;
    const each = refused.map((r) => `${r.key} ${r.why}`).join('; ');
    return `${field}: ${each}. Cluster '${c.name}' (yarn) sets these itself`;
  },
  // Containers: the driver's (the application master's) and its executors', each with YARN's overhead.
  quotaNeed: (m, instances) => {
    const executors = executorsOf(m);
    return {
      cpu: instances * ((m.driverCores ?? 1) + executors * (m.executorCores ?? 1)),
      memory: instances * (container(m.driverMemory) + executors * container(m.executorMemory)),
      pods: instances * (1 + executors),
    };
  },
  countsPods: true,
  // The queue's maximum capacity: a request that can never fit answers 402 instead of waiting ACCEPTED forever.
  capacity: async (c) => {
    const queue = c.queue || 'default';
    const max = await yarnRest(c.url, 5_000)
      .queueMax(queue)
      .catch(() => undefined);
    return max && { what: `queue '${queue}'`, cpu: max.vCores, memory: max.memoryMb * 2 ** 20 };
  },
  capabilities: {
    namespaces: false,
    sqlEngines: ['SPARK_SQL'],
    connect: false,
    driversOnWorkerHost: false,
    // YARN's own web proxy serves an application's UI; the engine's driver runs without one.
    sparkUi: null,
  },
  sweep: (config, cutoff) => sweepYarnFolders(config.STACK_DIR, cutoff),
};
