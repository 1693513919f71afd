// What SQL engines run, the same on both cluster types. SPARK_SQL: Spark's Thrift Server. TRINO: one
// coordinator that also runs the queries, with the tpch and memory catalogs (the only plugins
// scripts/setup.sh keeps); local clusters write its etc folder into the driver folder, k8s clusters
// into a ConfigMap.
import { InvalidSpecError } from '../../domain/driver';

/** The main class of a SPARK_SQL engine: spark-submit runs it by class alone, with no primary resource. */
export const THRIFT_SERVER_CLASS = 'org.apache.spark.sql.hive.thriftserver.HiveThriftServer2';

export const TRINO_VERSION = '368';
export const TRINO_CATALOGS = ['tpch', 'memory'] as const;

/** Trino's heap in MiB: the spec's driverMemory read as Spark reads it (a bare number is MiB), else 1 GiB. */
export function trinoHeapMiB(driverMemory: string | undefined): number {
  if (!driverMemory) return 1024;
  const m = /^\s*(\d+)\s*([kmgt]?)b?\s*$/i.exec(driverMemory);
  if (!m)
    throw new InvalidSpecError(`invalid driverMemory '${driverMemory}': not a JVM memory size such as 512m or 2g`);
  const factor: Record<string, number> = { '': 1, k: 1 / 1024, m: 1, g: 1024, t: 1024 ** 2 };
  return Math.max(256, Math.ceil(Number(m[1]) * factor[m[2].toLowerCase()]));
}

export interface TrinoNode {
  port: number;
  dataDir: string;
  heapMiB: number;
  /** Default: Trino's image sets the host name; the launcher needs one. */
  nodeId?: string;
  /** Address to listen on and announce; default all interfaces, announced as localhost. */
  host?: string;
}

const properties = (p: Record<string, string | undefined>) =>
  Object.entries(p)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');

/** Trino's etc folder: file path (relative to it) → content. */
export function trinoEtcFiles(n: TrinoNode): Record<string, string> {
  return {
    'node.properties': properties({
      'node.environment': 'spark_orchestrator',
      // Trino's node ids allow letters, digits, - and _ only.
      'node.id': n.nodeId?.replace(/[^A-Za-z0-9_-]/g, '_'),
      'node.data-dir': n.dataDir,
      'node.bind-ip': n.host,
      'node.internal-address': n.host,
    }),
    // Small on purpose: engines share their host or node with Spark drivers.
    'jvm.config': [
      '-server',
      `-Xmx${n.heapMiB}M`,
      '-XX:+UseG1GC',
      '-XX:+ExitOnOutOfMemoryError',
      '-Djdk.attach.allowAttachSelf=true',
      '',
    ].join('\n'),
    'config.properties': properties({
      coordinator: 'true',
      'node-scheduler.include-coordinator': 'true',
      'http-server.http.port': String(n.port),
      'discovery.uri': `http://${n.host ?? 'localhost'}:${n.port}`,
      // Trino keeps every query it ran in the last 15 minutes (the default) for its web UI, whole: at 100
      // statements/s that is 90,000 queries in a small heap, which its collector scans again and again (8
      // clients of `select 1`: 30 ms of CPU a statement, 14 ms with 5 s). The service keeps its own query
      // history; Trino keeps its last 100 queries (query.max-history) and any of the last 5 seconds.
      'query.min-expire-age': '5s',
      // And the node running a query's tasks keeps each finished task, stats tree and all, for 15 minutes (the
      // default) after its query is gone: 8 clients of `select 1` filled a 1 GiB heap with 27,000 of them
      // within 10 minutes, and the engine fell from 110 to 2 statements/s, its collector running without end.
      // The coordinator reads a task's final state as soon as it ends; 10 s leaves it ample time.
      'task.info.max-age': '10s',
    }),
    ...Object.fromEntries(TRINO_CATALOGS.map((c) => [`catalog/${c}.properties`, properties({ 'connector.name': c })])),
  };
}
