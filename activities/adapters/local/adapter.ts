// The `local` cluster adapter: each driver is `spark-submit --master local[N]` on the worker's host,
// detached into its own session so it outlives a worker crash or restart.
//
// Everything about a driver lives in its folder DRIVER_DIR/<driverId>, which is also the process's
// working directory (so spark-warehouse and metastore_db stay per driver):
//   command.json  what was run (argv, the environment it added, labels), for operators
//   pid           written by the wrapper shell itself: its pid, which is also the process group id
//   driver.log    stdout and stderr of the wrapper, spark-submit, the JVM and the Python driver
//   python        (Python drivers) the driver's Python: the real one, its output appended to driver.log
//   exit          spark-submit's exit code, written by the wrapper after it ends (the worker may be gone)
//   removed       marker written by remove()
//   eventlog/     Spark's event log; its file name is the application id (local-…)
//   appid         the application id once found, so later status calls need not look again
//   endpoint      SQL engines (role sql-engine): where it listens, JSON {host, port}; see sql-engine.ts for
//                 the rest of an engine's files
// The folder's mkdir is the launch lock: whoever creates it starts the one process.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ClusterAdapter, DriverSpec, DriverStatus, LogRange } from '../../../domain/driver';
import type { JobLogEntry } from '../../../domain/types';
import { ROOT, type Config } from '../../../lib/config';
import { directSecret } from '../../../lib/driver-secret';
import { redact } from '../../../lib/log';
import { childEnv } from './child-env';
import { DRIVER_FILES, errCode, readIntFile, writeFileAtomic } from './driver-files';
import { driverStatus } from './driver-status';
import { readLineRange } from './logs';
import { killDriver, spawnDriver, waitUntil } from './process';
import { pythonFor } from './python-env';
import { connectServerPlan } from './connect-server';
import { freePort, sqlEnginePlan } from './sql-engine';
import { uiFile } from './spark-ui';
import { uiFilterClasses } from './ui-filter';
import { LOOPBACK_ENV, sparkSubmitArgs, usesPython, type LaunchPlan } from './submit-args';

/** TRINO_HOME may be left out: TRINO engines then fail to launch as not installed. */
export type LocalAdapterConfig = Pick<
  Config,
  'SPARK_HOME' | 'PYTHON' | 'DRIVER_DIR' | 'STACK_DIR' | 'LOCAL_SPARK_THREADS'
> &
  Partial<Pick<Config, 'TRINO_HOME' | 'SQL_DATA_DIR' | 'SECRET_KEY' | 'SPARK_HISTORY_DIR' | 'SPARK_CONNECT_JAR'>>;

export interface LocalAdapterOptions {
  /** The interactive runner's main file. Default: <repo>/runner/runner.py. */
  runnerPath?: string;
}

const DRIVER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

interface LocalContext {
  config: LocalAdapterConfig;
  runnerPath: string;
}

export function createLocalAdapter(config: LocalAdapterConfig, opts: LocalAdapterOptions = {}): ClusterAdapter {
  const l: LocalContext = { config, runnerPath: opts.runnerPath ?? path.join(ROOT, 'runner', 'runner.py') };
  return {
    // Its drivers' processes and folders live on this host only.
    hostBound: true,
    launch: (spec) => launch(l, spec),
    // async: an invalid driverId rejects, as from the other methods, instead of throwing.
    status: async (driverId) => driverStatus(driverDir(config, driverId), config.SPARK_HISTORY_DIR),
    logs: (driverId, range) => logs(l, driverId, range),
    remove: (driverId) => remove(l, driverId),
  };
}

function driverDir(config: LocalAdapterConfig, driverId: string): string {
  // The id becomes a folder name: nothing that could climb out of DRIVER_DIR.
  if (!DRIVER_ID.test(driverId)) throw new Error(`invalid driverId ${JSON.stringify(driverId)}`);
  return path.join(config.DRIVER_DIR, driverId);
}

/** A Spark driver's plan: spark-submit of its main resource, with the Python its requirements need. */
async function sparkPlan(l: LocalContext, spec: DriverSpec): Promise<LaunchPlan> {
  // The UI's port is chosen here and recorded in the folder: the API's proxy finds it there (spark-ui.ts).
  const uiPort = await freePort();
  const filterClasses = await uiFilterClasses(l.config.SPARK_HOME, l.config.STACK_DIR);
  const argv = sparkSubmitArgs(spec, l.config, l.runnerPath, { port: uiPort, filterClasses });
  const pythonDriver = usesPython(spec);
  const python = pythonDriver ? await pythonFor(l.config, spec.spark.pyRequirements) : l.config.PYTHON;
  const dir = driverDir(l.config, spec.driverId);
  const env: Record<string, string> = {
    SPARK_HOME: l.config.SPARK_HOME,
    PYSPARK_PYTHON: python,
    PYSPARK_DRIVER_PYTHON: pythonDriver ? path.join(dir, DRIVER_FILES.python) : python,
  };
  // A runner opens its direct execute channel on loopback when it has a secret to check callers with.
  if (spec.role === 'runner' && l.config.SECRET_KEY)
    env.RUNNER_DIRECT_SECRET = directSecret(l.config.SECRET_KEY, spec.driverId);
  return {
    argv,
    env,
    dirs: [DRIVER_FILES.eventLog],
    files: {
      [DRIVER_FILES.ui]: uiFile(uiPort, spec.driverId, l.config.SECRET_KEY),
      ...(pythonDriver ? { [DRIVER_FILES.python]: driverPython(python, path.join(dir, DRIVER_FILES.log)) } : {}),
    },
    executables: pythonDriver ? [DRIVER_FILES.python] : [],
  };
}

/**
 * The Python driver's own output goes to driver.log directly. Spark's PythonRunner would copy it there from a
 * pipe, on a daemon thread the JVM does not wait for when it exits: under load, the last lines of a short job
 * (all of them, for a job that only prints) could be lost. A jobConfig spark.pyspark.driver.python still wins.
 */
const driverPython = (python: string, log: string): string =>
  `#!/bin/sh\nexec ${shellQuote(python)} "$@" >> ${shellQuote(log)} 2>&1\n`;

const shellQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

async function launch(l: LocalContext, spec: DriverSpec): Promise<DriverStatus> {
  const { config } = l;
  const dir = driverDir(config, spec.driverId);
  if (existsSync(dir)) return driverStatus(dir);
  // Validation, the Python environment and an engine's port come before the lock, so an invalid spec
  // or a pip failure leaves no folder behind and a corrected retry is not mistaken for a launched driver.
  const plan =
    spec.role === 'sql-engine'
      ? await sqlEnginePlan(spec, config)
      : spec.role === 'connect-server'
        ? await connectServerPlan(spec, config)
        : await sparkPlan(l, spec);

  await fs.mkdir(config.DRIVER_DIR, { recursive: true });
  try {
    await fs.mkdir(dir);
  } catch (e) {
    if (errCode(e) === 'EEXIST') return driverStatus(dir);
    throw e;
  }
  await writePlanFiles(dir, plan);
  const { argv } = plan;
  // Loopback last: nothing a driver runs listens beyond this host.
  const addedEnv: Record<string, string> = { ...plan.env, ...spec.env, ...LOOPBACK_ENV };
  await writeFileAtomic(
    path.join(dir, DRIVER_FILES.command),
    JSON.stringify(
      {
        driverId: spec.driverId,
        role: spec.role,
        argv,
        env: redact(addedEnv),
        labels: spec.labels,
        launchedAt: Date.now(),
      },
      null,
      2,
    ),
  );
  const logFile = path.join(dir, DRIVER_FILES.log);
  // Only an allow-list of the worker's environment: never the service's own settings and secrets.
  const spawnError = await spawnDriver(dir, argv, childEnv('driver', addedEnv), logFile);
  if (spawnError) {
    // Recorded like a failed run, so status() reports it and a retry does not wait forever.
    await fs.appendFile(logFile, `failed to start the driver: ${spawnError.message}\n`);
    await writeFileAtomic(path.join(dir, DRIVER_FILES.exit), '127\n');
  }
  // The wrapper writes its pid within milliseconds; waiting for it lets the caller see RUNNING.
  await waitUntil(
    () => existsSync(path.join(dir, DRIVER_FILES.pid)) || existsSync(path.join(dir, DRIVER_FILES.exit)),
    2_000,
  );
  return driverStatus(dir);
}

/** The plan's folders and files, all in place before the process starts (an engine's endpoint among them). */
async function writePlanFiles(dir: string, plan: LaunchPlan): Promise<void> {
  for (const d of plan.dirs) await fs.mkdir(path.resolve(dir, d), { recursive: true });
  for (const [rel, content] of Object.entries(plan.files)) {
    const file = path.join(dir, rel);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, content);
  }
  for (const rel of plan.executables ?? []) await fs.chmod(path.join(dir, rel), 0o755);
}

async function logs(l: LocalContext, driverId: string, range: LogRange): Promise<JobLogEntry[]> {
  const dir = driverDir(l.config, driverId);
  // The folder itself, not a link a driver put in its place (its log is opened the same way: logs.ts).
  if (!(await fs.lstat(dir).catch(() => undefined))?.isDirectory()) return [];
  const fileName = path.join(dir, DRIVER_FILES.log);
  const from = Math.max(0, Math.floor(range.from));
  const [s, log] = await Promise.all([
    driverStatus(dir),
    readLineRange(fileName, from, Math.max(0, Math.floor(range.size))),
  ]);
  return [
    { name: driverId, type: 'process', role: 'driver', state: s.phase, from, logSize: log.length, fileName, log },
  ];
}

async function remove(l: LocalContext, driverId: string): Promise<void> {
  const dir = driverDir(l.config, driverId);
  if (!existsSync(dir)) return;
  // The marker goes first: a status call during the kill must read 'removed', not 'killed?'.
  if (!existsSync(path.join(dir, DRIVER_FILES.removed)))
    await writeFileAtomic(path.join(dir, DRIVER_FILES.removed), `${new Date().toISOString()}\n`);
  let pid = await readIntFile(path.join(dir, DRIVER_FILES.pid));
  if (!pid && !existsSync(path.join(dir, DRIVER_FILES.exit))) {
    // A launch between mkdir and the wrapper's first line: give it the moment it needs to write its pid.
    await waitUntil(() => existsSync(path.join(dir, DRIVER_FILES.pid)), 2_000);
    pid = await readIntFile(path.join(dir, DRIVER_FILES.pid));
  }
  if (pid) await killDriver(pid.value, dir);
}
