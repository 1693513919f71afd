// Spark Connect servers of local clusters (DriverSpec.role 'connect-server'): Spark 3.5.7's SparkConnectServer
// by spark-submit with the cluster's Spark settings, its gRPC port chosen at launch and recorded in the folder's
// `endpoint` file like an SQL engine's. 3.5 binds every interface (it has no address setting), so the server
// loads an interceptor that refuses any call without its per-server secret, which only the gateway adds.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { InvalidSpecError, type DriverSpec } from '../../../domain/driver';
import type { EngineEndpoint } from '../../../domain/sql-engine';
import type { Config } from '../../../lib/config';
import { connectServerSecret } from '../../../lib/driver-secret';
import { DRIVER_FILES } from './driver-files';
import { ENGINE_HOST, freePort } from './sql-engine';
import { uiFile } from './spark-ui';
import { localSparkConf, sparkSubmitOptions, type LaunchPlan, type LocalUi, type SubmitConfig } from './submit-args';
import { uiFilterClasses } from './ui-filter';

export const CONNECT_SERVER_CLASS = 'org.apache.spark.sql.connect.service.SparkConnectServer';
const INTERCEPTOR_CLASS = 'sparkorchestrator.connect.ServerSecretInterceptor';
/** In the server's folder (its working directory) until its interceptor has read it. */
const SECRET_FILE = 'connect-secret';

export type ConnectConfig = SubmitConfig &
  Pick<Config, 'PYTHON'> &
  Partial<Pick<Config, 'SPARK_CONNECT_JAR' | 'SECRET_KEY'>>;

/** The interceptor's jar, compiled by scripts/setup-connect.sh. */
export const connectInterceptorJar = (config: Pick<Config, 'STACK_DIR'>): string =>
  path.resolve(config.STACK_DIR, 'jvm', 'connect-interceptor.jar');

/** What launch runs for a Connect server on `port`. Throws InvalidSpecError when the server is not installed. */
export function connectServerLaunch(spec: DriverSpec, config: ConnectConfig, port: number, ui?: LocalUi): LaunchPlan {
  const jar = config.SPARK_CONNECT_JAR;
  const interceptor = connectInterceptorJar(config);
  for (const [what, p] of [
    ['the Spark Connect server', jar],
    ["the Connect servers' interceptor", interceptor],
  ] as const) {
    if (!p || !existsSync(p))
      throw new InvalidSpecError(`${what} is not installed on this host (no ${p}): run scripts/setup.sh`);
  }
  if (!config.SECRET_KEY) throw new InvalidSpecError('Connect servers need SECRET_KEY (their secret derives from it)');
  for (const p of [...spec.spark.artifacts.jars, ...spec.spark.artifacts.files]) {
    if (!path.isAbsolute(p)) throw new InvalidSpecError(`artifact path ${p} is not absolute`);
  }
  const conf = {
    // Its UI (when given a port) on loopback behind the Host check, sealed for the API's proxy like a driver's;
    // else none.
    ...(ui ? {} : { 'spark.ui.enabled': 'false' }),
    ...localSparkConf(spec, config, ui),
    'spark.connect.grpc.binding.port': String(port),
    'spark.connect.grpc.interceptor.classes': INTERCEPTOR_CLASS,
  };
  const argv = [
    path.join(config.SPARK_HOME, 'bin', 'spark-submit'),
    ...sparkSubmitOptions(spec, config, conf, {
      mainClass: CONNECT_SERVER_CLASS,
      extraJars: [jar as string, interceptor, ...spec.spark.artifacts.jars],
    }),
    // Without a primary resource spark-submit refuses a class it does not know; spark-internal is its no-op one.
    'spark-internal',
  ];
  const endpoint: EngineEndpoint = { host: ENGINE_HOST, port };
  return {
    argv,
    env: {
      SPARK_HOME: config.SPARK_HOME,
      // Python UDFs of the sessions run in workers of this interpreter (the venv has the client's packages).
      PYSPARK_PYTHON: config.PYTHON,
      PYSPARK_DRIVER_PYTHON: config.PYTHON,
      // This server's own secret (not the service's) is in a file its interceptor reads and deletes when the
      // server starts, so no session's code finds it in an environment (ServerSecretInterceptor.java).
      CONNECT_SERVER_SECRET_FILE: SECRET_FILE,
    },
    dirs: [DRIVER_FILES.eventLog],
    files: {
      [DRIVER_FILES.endpoint]: `${JSON.stringify(endpoint)}\n`,
      [SECRET_FILE]: `${connectServerSecret(config.SECRET_KEY, spec.driverId)}\n`,
      ...(ui && { [DRIVER_FILES.ui]: uiFile(ui.port, spec.driverId, config.SECRET_KEY) }),
    },
  };
}

export async function connectServerPlan(spec: DriverSpec, config: ConnectConfig): Promise<LaunchPlan> {
  const ui = { port: await freePort(), filterClasses: await uiFilterClasses(config.SPARK_HOME, config.STACK_DIR) };
  return connectServerLaunch(spec, config, await freePort(), ui);
}
