// A cluster's defaultApplicationConfig: Spark properties every driver on the cluster starts with.
import type { SparkSpec } from './types';

/** Parses leniently: `k=v` (or spark-defaults' `k v`) entries split by `;` or lines; `#` starts a comment line. */
export function parseDefaultConf(s: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of (s ?? '').split(/[;\n]/)) {
    const entry = raw.trim();
    if (!entry || entry.startsWith('#')) continue;
    const m = /^([^=\s]+)\s*(?:=|\s)\s*(.*)$/.exec(entry);
    if (m) out[m[1]] = m[2].trim();
  }
  return out;
}

/** The Spark settings of a cluster's own service drivers (SQL engines): its defaults and memory settings. */
export function clusterServiceSpec(
  name: string,
  cluster: { name: string; defaultApplicationConfig?: unknown; memorySettings?: unknown },
): SparkSpec {
  return {
    name,
    language: 'SCALA',
    clusterName: cluster.name,
    args: [],
    jobConfig: parseDefaultConf(
      typeof cluster.defaultApplicationConfig === 'string' ? cluster.defaultApplicationConfig : '',
    ),
    pyRequirements: [],
    packages: [],
    memorySettings: (cluster.memorySettings as SparkSpec['memorySettings']) ?? { dynamicAllocation: false },
    artifacts: { jars: [], files: [], pyFiles: [] },
    tags: {},
  };
}
