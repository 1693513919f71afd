// The SQL engines of local clusters (DriverSpec.role 'sql-engine'): what runs, the files it needs in
// its driver folder, and the port it listens on, chosen at launch and recorded in the folder's
// `endpoint` file. Both run through the same detached wrapper as any driver (adapter.ts).
//   SPARK_SQL  spark-submit of Spark's Thrift Server (HiveServer2 protocol), warehouse and Derby
//              metastore under SQL_DATA_DIR/<stateKey>, so a later generation sees the same tables
//   TRINO      Trino's launcher in the foreground, etc/ generated into trino/etc, data in trino/data
import { existsSync } from 'node:fs';
import path from 'node:path';
import { InvalidSpecError, type DriverSpec } from '../../../domain/driver';
import type { EngineEndpoint } from '../../../domain/sql-engine';
import type { Config } from '../../../lib/config';
import { freePort as anyFreePort } from '../../../lib/ports';
import { THRIFT_SERVER_CLASS, trinoEtcFiles, trinoHeapMiB } from '../sql-engine-config';
import { DRIVER_FILES } from './driver-files';
import { uiFile } from './spark-ui';
import { localSparkConf, sparkSubmitOptions, type LaunchPlan, type LocalUi, type SubmitConfig } from './submit-args';
import { uiFilterClasses } from './ui-filter';

export type EngineConfig = SubmitConfig &
  Pick<Config, 'PYTHON'> &
  Partial<Pick<Config, 'TRINO_HOME' | 'SQL_DATA_DIR' | 'SECRET_KEY'>>;

/** Engines listen on loopback only: nothing but this host's workers and API talk to them. */
export const ENGINE_HOST = '127.0.0.1';
/** Folders of a TRINO engine's driver folder: its generated etc, and the data folder it runs in. */
export const TRINO_DIRS = { etc: 'trino/etc', data: 'trino/data' } as const;
/** Where a SPARK_SQL engine writes each statement's log, for clients that fetch it. */
export const OPERATION_LOG_DIR = 'operation_logs';

// A stateKey becomes a folder name under SQL_DATA_DIR (default STACK_DIR/data/sql).
const STATE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

/** The folder of a SPARK_SQL engine's tables and metastore: shared by every generation with this stateKey. */
export const sqlStateDir = (
  config: Pick<Config, 'STACK_DIR'> & Partial<Pick<Config, 'SQL_DATA_DIR'>>,
  stateKey: string,
): string => path.resolve(config.SQL_DATA_DIR ?? path.join(config.STACK_DIR, 'data', 'sql'), stateKey);

/** A port no one listens on now (lib/ports.ts). Another process may still take it before the engine does: that
 * engine fails. */
export const freePort = (host = ENGINE_HOST): Promise<number> => anyFreePort(host);

/**
 * What launch runs for an engine, on a port it chose. Throws InvalidSpecError (before any folder
 * exists) for a spec without an engine, a stateKey that is no folder name, or a TRINO engine on a host
 * without Trino.
 */
export function sqlEngineLaunch(spec: DriverSpec, config: EngineConfig, port: number, ui?: LocalUi): LaunchPlan {
  const engine = spec.engine;
  if (!engine) throw new InvalidSpecError(`driver ${spec.driverId} has role sql-engine but no engine`);
  if (!STATE_KEY.test(engine.stateKey))
    throw new InvalidSpecError(`invalid engine stateKey ${JSON.stringify(engine.stateKey)}`);
  const plan =
    engine.type === 'TRINO' ? trinoLaunch(spec, config, port) : sparkSqlLaunch(spec, config, engine.stateKey, port, ui);
  const endpoint: EngineEndpoint = { host: ENGINE_HOST, port };
  return { ...plan, files: { ...plan.files, [DRIVER_FILES.endpoint]: `${JSON.stringify(endpoint)}\n` } };
}

/** sqlEngineLaunch on a free port. */
export async function sqlEnginePlan(spec: DriverSpec, config: EngineConfig): Promise<LaunchPlan> {
  if (spec.engine?.type === 'TRINO') return sqlEngineLaunch(spec, config, await freePort());
  const ui = { port: await freePort(), filterClasses: await uiFilterClasses(config.SPARK_HOME, config.STACK_DIR) };
  return sqlEngineLaunch(spec, config, await freePort(), ui);
}

function sparkSqlLaunch(
  spec: DriverSpec,
  config: EngineConfig,
  stateKey: string,
  port: number,
  ui?: LocalUi,
): LaunchPlan {
  const state = sqlStateDir(config, stateKey);
  const dir = path.resolve(config.DRIVER_DIR, spec.driverId);
  for (const p of [...spec.spark.artifacts.jars, ...spec.spark.artifacts.files]) {
    if (!path.isAbsolute(p)) throw new InvalidSpecError(`artifact path ${p} is not absolute`);
  }
  const conf = {
    // A UI only on a port chosen at launch and recorded in the folder (spark-ui.ts): engines share the host
    // with every other driver, and Spark's own choice (4040 and up) would move from run to run.
    'spark.ui.enabled': ui === undefined ? 'false' : 'true',
    ...localSparkConf(spec, config, ui),
    // The stateKey's warehouse, whatever the settings say: it is what the metastore's tables point into.
    'spark.sql.warehouse.dir': path.join(state, 'warehouse'),
  };
  const hiveConf: Record<string, string> = {
    'hive.server2.thrift.port': String(port),
    'hive.server2.thrift.bind.host': ENGINE_HOST,
    // Derby by absolute path: not in the working directory, which is this generation's driver folder.
    'javax.jdo.option.ConnectionURL': `jdbc:derby:;databaseName=${path.join(state, 'metastore_db')};create=true`,
    'hive.server2.logging.operation.enabled': 'true',
    'hive.server2.logging.operation.log.location': path.join(dir, OPERATION_LOG_DIR),
  };
  const argv = [
    path.join(config.SPARK_HOME, 'bin', 'spark-submit'),
    ...sparkSubmitOptions(spec, config, conf, { mainClass: THRIFT_SERVER_CLASS, extraJars: spec.spark.artifacts.jars }),
    // No primary resource: spark-submit knows the Thrift Server's class and passes these through to it.
    ...Object.entries(hiveConf).flatMap(([k, v]) => ['--hiveconf', `${k}=${v}`]),
  ];
  return {
    argv,
    env: { SPARK_HOME: config.SPARK_HOME },
    dirs: [DRIVER_FILES.eventLog, OPERATION_LOG_DIR, path.join(state, 'warehouse')],
    files: ui === undefined ? {} : { [DRIVER_FILES.ui]: uiFile(ui.port, spec.driverId, config.SECRET_KEY) },
  };
}

function trinoLaunch(spec: DriverSpec, config: EngineConfig, port: number): LaunchPlan {
  const home = config.TRINO_HOME;
  const launcher = home && path.join(home, 'bin', 'launcher.py');
  if (!launcher || !existsSync(launcher)) {
    throw new InvalidSpecError(
      `TRINO engines are not installed on this host (no ${launcher || 'TRINO_HOME'}): ` +
        'run scripts/setup.sh without SKIP_TRINO=1, or set TRINO_HOME',
    );
  }
  const dir = path.resolve(config.DRIVER_DIR, spec.driverId);
  const [etc, data] = [path.join(dir, TRINO_DIRS.etc), path.join(dir, TRINO_DIRS.data)];
  const heapMiB = trinoHeapMiB(spec.spark.memorySettings.driverMemory);
  const etcFiles = trinoEtcFiles({ port, dataDir: data, heapMiB, nodeId: spec.driverId, host: ENGINE_HOST });
  return {
    // launcher.py through our Python, not bin/launcher: that one wants a `python` on PATH, which Debian lacks.
    // `run` stays in the foreground and execs the JVM, so the wrapper's exit file gets Trino's exit code.
    argv: [config.PYTHON, launcher, 'run', `--etc-dir=${etc}`, `--data-dir=${data}`],
    env: {},
    dirs: [TRINO_DIRS.data],
    files: Object.fromEntries(Object.entries(etcFiles).map(([f, text]) => [`${TRINO_DIRS.etc}/${f}`, text])),
  };
}
