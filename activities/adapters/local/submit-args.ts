// The spark-submit command line of a local driver: `--master local[N]`, the job's conf and artifacts.
import { localRunnerJars } from '../runner-jvm';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InvalidSpecError, type DriverSpec } from '../../../domain/driver';
import { memorySparkConf } from '../../../domain/memory';
import type { Config } from '../../../lib/config';
import { DRIVER_FILES } from './driver-files';
import { uiFilterConf } from './ui-filter';

export type SubmitConfig = Pick<Config, 'SPARK_HOME' | 'DRIVER_DIR' | 'LOCAL_SPARK_THREADS' | 'STACK_DIR'>;

/** Whether the driver runs Python (and so needs an interpreter with its requirements). */
export const usesPython = (spec: DriverSpec): boolean => spec.role === 'runner' || spec.spark.language === 'PYTHON';

export interface LocalMainResource {
  /** What spark-submit runs: the runner, the first jar, or the main python file. */
  main: string;
  mainClass?: string;
  extraJars: string[];
  extraPyFiles: string[];
}

/** The main file of a PYTHON application: the pyFile named by jobClass (with or without .py). */
function pythonMain(jobClass: string | undefined, pyFiles: string[]): string {
  if (!jobClass) throw new InvalidSpecError('PYTHON job has no jobClass (the name of its main file among pyFiles)');
  const found =
    pyFiles.find((f) => path.basename(f, '.py') === jobClass) ?? pyFiles.find((f) => path.basename(f) === jobClass);
  if (found) return found;
  if (path.isAbsolute(jobClass) && jobClass.endsWith('.py') && existsSync(jobClass)) return jobClass;
  throw new InvalidSpecError(
    `PYTHON job's main file ${jobClass} is not among its pyFiles${pyFiles.length ? ` (${pyFiles.map((f) => path.basename(f)).join(', ')})` : ' (none uploaded)'}`,
  );
}

/**
 * What spark-submit runs and what goes beside it. Throws InvalidSpecError for relative artifact
 * paths and for a spec without a main resource that exists.
 */
export function localMainResource(spec: DriverSpec, runnerPath: string, stackDir = ''): LocalMainResource {
  const s = spec.spark;
  const { jars, files, pyFiles } = s.artifacts;
  for (const p of [...jars, ...files, ...pyFiles]) {
    if (!path.isAbsolute(p)) throw new InvalidSpecError(`artifact path ${p} is not absolute`);
  }
  let r: LocalMainResource;
  if (spec.role === 'runner') {
    // SCALA groups: the job interface and the runner's JVM classes, ahead of the group's jars.
    const extraJars = s.language === 'SCALA' ? [...localRunnerJars(stackDir), ...jars] : jars;
    r = { main: runnerPath, extraJars, extraPyFiles: pyFiles };
  } else if (s.language === 'SCALA') {
    if (!s.jobClass) throw new InvalidSpecError('SCALA job has no jobClass (the main class to run)');
    if (jars.length === 0) throw new InvalidSpecError(`SCALA job has no jar to find its main class ${s.jobClass} in`);
    r = { main: jars[0], mainClass: s.jobClass, extraJars: jars.slice(1), extraPyFiles: pyFiles };
  } else {
    const main = pythonMain(s.jobClass, pyFiles);
    r = { main, extraJars: jars, extraPyFiles: pyFiles.filter((f) => f !== main) };
  }
  if (!existsSync(r.main)) throw new InvalidSpecError(`main resource ${r.main} does not exist`);
  return r;
}

/**
 * The driver's Spark properties: its event log (which names the application id, and which the History Server
 * reads), memory settings, jobConfig, and, given `ui`, its web UI on that port behind the Host check of
 * ui-filter.ts (when its classes could be compiled).
 */
export function localSparkConf(
  spec: DriverSpec,
  config: Pick<SubmitConfig, 'DRIVER_DIR'>,
  ui?: LocalUi,
): Record<string, string> {
  const conf: Record<string, string> = {
    // The event log's file name is the application id, which Spark logs nowhere else in local mode.
    'spark.eventLog.enabled': 'true',
    'spark.eventLog.dir': pathToFileURL(
      path.join(path.resolve(config.DRIVER_DIR), spec.driverId, DRIVER_FILES.eventLog),
    ).href,
    // A folder (eventlog_v2_<appId>) that keeps its name when the run ends, so the History Server's link to
    // it (driver-files.ts linkHistory) stays valid; a single file would be renamed from .inprogress.
    'spark.eventLog.rolling.enabled': 'true',
    ...memorySparkConf(spec.spark.memorySettings),
    ...spec.spark.jobConfig,
    // Whatever the job says: a local driver (its RPC, block manager, UI) listens on loopback only, its UI
    // on the port recorded in its folder (the API's proxy reaches it there), with no kill buttons.
    ...(ui && { 'spark.ui.port': String(ui.port), 'spark.ui.killEnabled': 'false' }),
    ...LOOPBACK_CONF,
  };
  return ui?.filterClasses ? { ...conf, ...uiFilterConf(conf, ui.filterClasses) } : conf;
}

/** Where a driver's UI listens, and the folder of the Host check's classes (ui-filter.ts). */
export interface LocalUi {
  port: number;
  filterClasses?: string;
}

/** Where a local driver listens. */
export const LOOPBACK = '127.0.0.1';
const LOOPBACK_CONF = { 'spark.driver.host': LOOPBACK, 'spark.driver.bindAddress': LOOPBACK };
/** The environment of a local Spark driver: SPARK_LOCAL_IP puts its UI (which takes no setting) on loopback too. */
export const LOOPBACK_ENV = { SPARK_LOCAL_IP: LOOPBACK };

/** What launch starts in a driver folder: the command, what it adds to the environment, what it needs there. */
export interface LaunchPlan {
  argv: string[];
  env: Record<string, string>;
  /** Folders to create: relative to the driver folder, or absolute. */
  dirs: string[];
  /** Files to write, by path relative to the driver folder. */
  files: Record<string, string>;
  /** Of those files, the ones made executable. */
  executables?: string[];
}

/**
 * The options of a local spark-submit, before its main resource: master, name, class, the Spark
 * properties `conf` and what comes beside the main resource.
 */
export function sparkSubmitOptions(
  spec: DriverSpec,
  config: Pick<SubmitConfig, 'LOCAL_SPARK_THREADS'>,
  conf: Record<string, string>,
  r: Omit<LocalMainResource, 'main' | 'extraPyFiles'> & { extraPyFiles?: string[] },
): string[] {
  const s = spec.spark;
  const args = ['--master', `local[${config.LOCAL_SPARK_THREADS}]`, '--name', s.name || spec.driverId];
  if (r.mainClass) args.push('--class', r.mainClass);
  for (const [k, v] of Object.entries(conf)) args.push('--conf', `${k}=${v}`);
  if (conf['spark.driver.memory']) args.push('--driver-memory', conf['spark.driver.memory']);
  if (s.packages.length) args.push('--packages', s.packages.join(','));
  if (r.extraJars.length) args.push('--jars', r.extraJars.join(','));
  if (s.artifacts.files.length) args.push('--files', s.artifacts.files.join(','));
  if (r.extraPyFiles?.length) args.push('--py-files', r.extraPyFiles.join(','));
  return args;
}

/**
 * The spark-submit command line of a driver. Throws an InvalidSpecError naming what is missing when
 * the spec has no runnable main resource (the caller makes that a non-retryable failure).
 */
export function sparkSubmitArgs(spec: DriverSpec, config: SubmitConfig, runnerPath: string, ui?: LocalUi): string[] {
  const r = localMainResource(spec, runnerPath, config.STACK_DIR);
  const options = sparkSubmitOptions(spec, config, localSparkConf(spec, config, ui), r);
  return [path.join(config.SPARK_HOME, 'bin', 'spark-submit'), ...options, r.main, ...spec.spark.args];
}
