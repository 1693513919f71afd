// SQL engines on yarn clusters (DriverSpec.role 'sql-engine'): Spark's Thrift Server as a YARN application in
// client deploy mode. Spark refuses cluster mode for the Thrift Server ("Cluster deploy mode is not applicable to
// Spark Thrift server"), so its driver (the Thrift Server itself) runs on the launching worker's host, detached
// like a local driver, and its executors run in YARN containers of the cluster's queue (the application master
// is Spark's ExecutorLauncher). The API reaches it as it reaches a local cluster's engine: on loopback of the
// worker's host, so the API must run on the workers' hosts for SQL on yarn clusters (as for local clusters).
// Only SPARK_SQL: a Trino coordinator is no YARN application.
import path from 'node:path';
import { InvalidSpecError, type DriverSpec } from '../../../domain/driver';
import type { EngineEndpoint } from '../../../domain/sql-engine';
import { THRIFT_SERVER_CLASS } from '../sql-engine-config';
import { ENGINE_HOST, OPERATION_LOG_DIR, sqlStateDir } from '../local/sql-engine';
import { isLoopbackHost, yarnSparkConf, type YarnAdapterOptions } from './submit-args';

const STATE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

/** What launch runs for an engine listening on `port`: spark-submit's arguments, and what it adds to the environment. */
export function yarnEngineLaunch(
  spec: DriverSpec,
  o: YarnAdapterOptions,
  dir: string,
  port: number,
): { args: string[]; env: Record<string, string>; endpoint: EngineEndpoint } {
  const engine = spec.engine;
  if (!engine) throw new InvalidSpecError(`driver ${spec.driverId} has role sql-engine but no engine`);
  if (engine.type !== 'SPARK_SQL')
    throw new InvalidSpecError(`${engine.type} engines do not run on yarn clusters (SPARK_SQL does)`);
  if (!STATE_KEY.test(engine.stateKey))
    throw new InvalidSpecError(`invalid engine stateKey ${JSON.stringify(engine.stateKey)}`);
  const state = sqlStateDir(o.config, `yarn-${engine.stateKey}`);
  const loopback = isLoopbackHost(o.cluster.url);
  const { 'spark.yarn.submit.waitAppCompletion': _cluster, ...yarnConf } = yarnSparkConf(spec, o);
  const conf: Record<string, string> = {
    // Tables outlive the engine's generations: a path without a scheme is on the cluster's default filesystem.
    'spark.sql.warehouse.dir': path.join(state, 'warehouse'),
    ...yarnConf,
    // The driver runs on the service's own host: its UI (all interfaces, kill buttons) stays off.
    'spark.ui.enabled': 'false',
    // The executors connect back to the driver: on a one-host (loopback) YARN at loopback, else at this host's
    // name (Spark's default), which the nodes must reach.
    ...(loopback && { 'spark.driver.host': ENGINE_HOST, 'spark.driver.bindAddress': ENGINE_HOST }),
  };
  const hiveConf: Record<string, string> = {
    'hive.server2.thrift.port': String(port),
    // Loopback whatever the cluster: the Thrift Server checks no password, the API is its only client.
    'hive.server2.thrift.bind.host': ENGINE_HOST,
    'javax.jdo.option.ConnectionURL': `jdbc:derby:;databaseName=${path.join(state, 'metastore_db')};create=true`,
    'hive.server2.logging.operation.enabled': 'true',
    'hive.server2.logging.operation.log.location': path.join(dir, OPERATION_LOG_DIR),
  };
  const s = spec.spark;
  const args = ['--master', 'yarn', '--deploy-mode', 'client', '--name', s.name || spec.driverId];
  args.push('--class', THRIFT_SERVER_CLASS);
  for (const [k, v] of Object.entries(conf)) args.push('--conf', `${k}=${v}`);
  // In client mode the driver's JVM is spark-submit's own: its heap is set on the command line.
  if (conf['spark.driver.memory']) args.push('--driver-memory', conf['spark.driver.memory']);
  if (s.packages.length) args.push('--packages', s.packages.join(','));
  for (const p of [...s.artifacts.jars, ...s.artifacts.files])
    if (!path.isAbsolute(p)) throw new InvalidSpecError(`artifact path ${p} is not absolute`);
  if (s.artifacts.jars.length) args.push('--jars', s.artifacts.jars.join(','));
  if (s.artifacts.files.length) args.push('--files', s.artifacts.files.join(','));
  // No primary resource: spark-submit knows the Thrift Server's class and passes these through to it.
  args.push(...Object.entries(hiveConf).flatMap(([k, v]) => ['--hiveconf', `${k}=${v}`]));
  return {
    args,
    env: loopback ? { SPARK_LOCAL_IP: ENGINE_HOST } : {},
    endpoint: { host: ENGINE_HOST, port },
  };
}
