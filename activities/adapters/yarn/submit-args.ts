// How a driver is submitted to YARN, as pure functions of its spec and the cluster's fields: spark-submit's
// arguments, the Spark properties (the service's own last), the runner's environment and the Hadoop
// properties of the configuration folder. The adapter (adapter.ts) runs them.
import path from 'node:path';
import { InvalidSpecError, type DriverSpec } from '../../../domain/driver';
import { memorySparkConf } from '../../../domain/memory';
import { parseDefaultConf } from '../../../domain/spark-defaults';
import type { Config } from '../../../lib/config';
import { directSecret } from '../../../lib/driver-secret';
import { localMainResource } from '../local/submit-args';

/** The fields of a stored yarn cluster the adapter reads (secrets: none). */
export interface YarnClusterSettings {
  id: string;
  name: string;
  /** The ResourceManager's web address, http(s)://host:port. */
  url: string;
  /** host:port of the ResourceManager's client (IPC) address; default the url's host, port 8032. */
  resourceManagerAddress?: string;
  hadoopConf?: Record<string, string>;
  queue?: string;
  defaultApplicationConfig?: string;
  temporalAddress?: string;
}

export type YarnAdapterConfig = Pick<Config, 'SPARK_HOME' | 'PYTHON' | 'STACK_DIR'> &
  Partial<Pick<Config, 'SECRET_KEY' | 'SQL_DATA_DIR'>>;

export interface YarnAdapterOptions {
  cluster: YarnClusterSettings;
  config: YarnAdapterConfig;
  /** The runner's main file. Default <repo>/runner/runner.py. */
  runnerPath?: string;
  /** A ResourceManager or NodeManager call not answered within this fails (status UNKNOWN). Default 10000. */
  requestTimeoutMs?: number;
}

/** The tag the driver's application carries. */
export const yarnTag = (driverId: string) => `so-${driverId}`.toLowerCase();

/** The ResourceManager's client address: the setting, else the web address's host on port 8032. */
export const rmClientAddress = (c: Pick<YarnClusterSettings, 'url' | 'resourceManagerAddress'>): string =>
  c.resourceManagerAddress || `${new URL(c.url).hostname}:8032`;

/** The Spark properties of the driver, in the order where a later one wins: ours last but for jobConfig's own. */
export function yarnSparkConf(spec: DriverSpec, o: YarnAdapterOptions): Record<string, string> {
  const defaults = parseDefaultConf(o.cluster.defaultApplicationConfig ?? '');
  const conf: Record<string, string> = {
    // Without either, Spark uploads its 300 MB of jars on every submission: the nodes have the same Spark.
    ...(defaults['spark.yarn.archive'] || spec.spark.jobConfig['spark.yarn.archive']
      ? {}
      : { 'spark.yarn.jars': `local:${path.join(o.config.SPARK_HOME, 'jars')}/*` }),
    'spark.yarn.maxAppAttempts': '1',
    ...defaults,
    ...memorySparkConf(spec.spark.memorySettings),
    ...spec.spark.jobConfig,
    // The service's own, which a request may not change (hadoop-conf.ts refuses them before they get here).
    'spark.yarn.tags': yarnTag(spec.driverId),
    'spark.yarn.submit.waitAppCompletion': 'false',
    'spark.yarn.queue': o.cluster.queue || 'default',
  };
  const python = spec.spark.jobConfig['spark.pyspark.python'] ?? o.config.PYTHON;
  conf['spark.yarn.appMasterEnv.PYSPARK_PYTHON'] ??= python;
  conf['spark.executorEnv.PYSPARK_PYTHON'] ??= python;
  // What the driver needs in its environment (a runner's Temporal address, task queue, channel secret).
  for (const [k, v] of Object.entries({ ...spec.env, ...runnerEnv(spec, o) })) conf[`spark.yarn.appMasterEnv.${k}`] = v;
  return conf;
}

const LOOPBACK = /^(localhost|127\.[\d.]+|\[?::1\]?)$/i;

/** Whether the ResourceManager's web address is on loopback: a YARN on this one host. */
export const isLoopbackHost = (url: string): boolean => LOOPBACK.test(new URL(url).hostname);

/**
 * A runner's own variables: the Temporal frontend as the nodes reach it (the cluster's temporalAddress, else
 * the worker's), its direct channel's secret (derived for this driver, never the service's key) and where that
 * channel listens: loopback when the ResourceManager is on loopback (one host), else every interface of the
 * node, which the runner advertises (the secret guards it).
 */
export function runnerEnv(spec: DriverSpec, o: YarnAdapterOptions): Record<string, string> {
  if (spec.role !== 'runner') return {};
  const env: Record<string, string> = {};
  if (o.cluster.temporalAddress) env.TEMPORAL_ADDRESS = o.cluster.temporalAddress;
  if (o.config.SECRET_KEY) {
    env.RUNNER_DIRECT_SECRET = directSecret(o.config.SECRET_KEY, spec.driverId);
    env.RUNNER_DIRECT_HOST = isLoopbackHost(o.cluster.url) ? '127.0.0.1' : '0.0.0.0';
  }
  return env;
}

/** spark-submit's arguments (after the executable). */
export function yarnSubmitArgs(
  spec: DriverSpec,
  o: YarnAdapterOptions,
  runnerPath: string,
  runnerZip?: string,
): string[] {
  if (spec.role === 'sql-engine') throw new InvalidSpecError('SQL engines are launched in client mode (sql-engine.ts)');
  const r = localMainResource(spec, runnerPath, o.config.STACK_DIR);
  const s = spec.spark;
  const args = ['--master', 'yarn', '--deploy-mode', 'cluster', '--name', s.name || spec.driverId];
  if (r.mainClass) args.push('--class', r.mainClass);
  for (const [k, v] of Object.entries(yarnSparkConf(spec, o))) args.push('--conf', `${k}=${v}`);
  if (s.packages.length) args.push('--packages', s.packages.join(','));
  if (r.extraJars.length) args.push('--jars', r.extraJars.join(','));
  if (s.artifacts.files.length) args.push('--files', s.artifacts.files.join(','));
  const pyFiles = runnerZip ? [runnerZip, ...r.extraPyFiles] : r.extraPyFiles;
  if (pyFiles.length) args.push('--py-files', pyFiles.join(','));
  return [...args, r.main, ...s.args];
}

/** The Hadoop properties spark-submit reads: the cluster's, then the ResourceManager's addresses. */
export function hadoopProps(c: YarnClusterSettings): Record<string, string> {
  const web = new URL(c.url);
  return {
    ...(c.hadoopConf ?? {}),
    'yarn.resourcemanager.address': rmClientAddress(c),
    [web.protocol === 'https:' ? 'yarn.resourcemanager.webapp.https.address' : 'yarn.resourcemanager.webapp.address']:
      web.host,
  };
}
