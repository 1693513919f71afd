// The `local` cluster adapter: each driver is `spark-submit --master local[N]` on the worker's host,
// detached into its own session so it outlives a worker crash or restart.
//
// Everything about a driver lives in its folder DRIVER_DIR/<driverId>, which is also the process's
// working directory (so spark-warehouse and metastore_db stay per driver):
//   command.json  what was run (argv, the environment it added, labels), for operators
//   pid           written by the wrapper shell itself: its pid, which is also the process group id
//   driver.log    stdout and stderr of the wrapper, spark-submit, the JVM and the Python driver
//   exit          spark-submit's exit code, written by the wrapper after it ends (the worker may be gone)
//   removed       marker written by remove()
//   eventlog/     Spark's event log; its file name is the application id (local-…)
//   appid         the application id once found, so later status calls need not look again
// The folder's mkdir is the launch lock: whoever creates it starts the one process.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, createReadStream, existsSync, openSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { memorySparkConf } from '../../domain/memory';
import type { JobLogEntry } from '../../domain/types';
import { ROOT, type Config } from '../../lib/config';
import { redact } from '../../lib/log';
import { localRunnerJars } from './runner-jvm';
import { DriverPhase, InvalidSpecError, type ClusterAdapter, type DriverSpec, type DriverStatus, type LogRange } from './types';

export type LocalAdapterConfig = Pick<Config, 'SPARK_HOME' | 'PYTHON' | 'DRIVER_DIR' | 'STACK_DIR' | 'LOCAL_SPARK_THREADS'>;

export interface LocalAdapterOptions {
  /** The interactive runner's main file. Default: <repo>/runner/runner.py. */
  runnerPath?: string;
}

export const DRIVER_FILES = {
  command: 'command.json',
  pid: 'pid',
  exit: 'exit',
  log: 'driver.log',
  removed: 'removed',
  eventLog: 'eventlog',
  appId: 'appid',
} as const;

/** A folder without a pid file older than this is a launch that died between mkdir and spawn. */
const LAUNCH_STALE_MS = 30_000;
/** Time remove() gives the JVM's shutdown hooks after SIGTERM before SIGKILL. */
const TERM_GRACE_MS = 3_000;
/** How far into driver.log the application id is looked for (Spark logs it while starting). */
const APP_ID_SCAN_BYTES = 1 << 20;
/** How much of the end of driver.log a failure message is made from. */
const ERROR_TAIL_BYTES = 64 * 1024;
const PIP_TIMEOUT_MS = 20 * 60_000;

/**
 * Runs spark-submit ("$@") in a shell that records its own pid first and spark-submit's exit code
 * last, each by rename so a reader never sees a half-written file. Paths are relative: the cwd is
 * the driver folder.
 */
const WRAPPER = [
  'echo $$ > pid.tmp && mv -f pid.tmp pid',
  '"$@"',
  'code=$?',
  'echo "$code" > exit.tmp && mv -f exit.tmp exit',
].join('\n');

const DRIVER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;
// Also found inside names like eventlog_v2_local-…, where \b would not match.
const APP_ID = /(?<![A-Za-z0-9])local-\d{10,}/;

export function createLocalAdapter(config: LocalAdapterConfig, opts: LocalAdapterOptions = {}): ClusterAdapter {
  const runnerPath = opts.runnerPath ?? path.join(ROOT, 'runner', 'runner.py');

  const driverDir = (driverId: string): string => {
    // The id becomes a folder name: nothing that could climb out of DRIVER_DIR.
    if (!DRIVER_ID.test(driverId)) throw new Error(`invalid driverId ${JSON.stringify(driverId)}`);
    return path.join(config.DRIVER_DIR, driverId);
  };

  async function launch(spec: DriverSpec): Promise<DriverStatus> {
    const dir = driverDir(spec.driverId);
    if (existsSync(dir)) return status(spec.driverId);
    // Validation and the Python environment come before the lock, so an invalid spec or a pip
    // failure leaves no folder behind and a corrected retry is not mistaken for a launched driver.
    const argv = sparkSubmitArgs(spec, config, runnerPath);
    const python = usesPython(spec) ? await pythonFor(config, spec.spark.pyRequirements) : config.PYTHON;

    await fs.mkdir(config.DRIVER_DIR, { recursive: true });
    try {
      await fs.mkdir(dir);
    } catch (e) {
      if (errCode(e) === 'EEXIST') return status(spec.driverId);
      throw e;
    }
    await fs.mkdir(path.join(dir, DRIVER_FILES.eventLog));
    const addedEnv: Record<string, string> = {
      SPARK_HOME: config.SPARK_HOME,
      PYSPARK_PYTHON: python,
      PYSPARK_DRIVER_PYTHON: python,
      ...spec.env,
    };
    await writeFileAtomic(
      path.join(dir, DRIVER_FILES.command),
      JSON.stringify({ driverId: spec.driverId, role: spec.role, argv, env: redact(addedEnv), labels: spec.labels, launchedAt: Date.now() }, null, 2),
    );

    const logFd = openSync(path.join(dir, DRIVER_FILES.log), 'a');
    try {
      const child = spawn('/bin/sh', ['-c', WRAPPER, 'spark-driver', ...argv], {
        cwd: dir,
        // Own session and process group: the driver survives the worker, and remove() can signal the group.
        detached: true,
        stdio: ['ignore', logFd, logFd],
        env: { ...process.env, ...addedEnv },
      });
      const spawnError = await new Promise<Error | undefined>((resolve) => {
        child.once('spawn', () => resolve(undefined));
        child.once('error', resolve);
      });
      if (spawnError) {
        // Recorded like a failed run, so status() reports it and a retry does not wait forever.
        await fs.appendFile(path.join(dir, DRIVER_FILES.log), `failed to start the driver: ${spawnError.message}\n`);
        await writeFileAtomic(path.join(dir, DRIVER_FILES.exit), '127\n');
      } else {
        child.unref();
      }
    } finally {
      closeSync(logFd);
    }
    // The wrapper writes its pid within milliseconds; waiting for it lets the caller see RUNNING.
    await waitUntil(() => existsSync(path.join(dir, DRIVER_FILES.pid)) || existsSync(path.join(dir, DRIVER_FILES.exit)), 2_000);
    return status(spec.driverId);
  }

  /*
   * Phases, derived from the files on every call (nothing is held in memory):
   *
   *   mkdir ──▶ (no pid file) ──▶ pid file, group alive ──▶ exit file
   *             PENDING            RUNNING                   0 → SUCCEEDED, else FAILED(exitCode, message)
   *               │ older than 30 s  │ group gone, no exit file
   *               ▼                  ▼
   *             FAILED (launch      FAILED ("ended without recording an exit code (killed?)")
   *             interrupted)
   *   removed marker, at any point before an exit file ──▶ FAILED ("removed")
   *
   * RUNNING starts when the wrapper process exists, before the JVM is up: Spark gives no dependable
   * signal of having started that works for every application, and the caller needs none.
   */
  async function status(driverId: string): Promise<DriverStatus> {
    const dir = driverDir(driverId);
    const dirStat = await statOrUndefined(dir);
    if (!dirStat) return { phase: DriverPhase.MISSING };
    const [pid, removed] = await Promise.all([readIntFile(path.join(dir, DRIVER_FILES.pid)), statOrUndefined(path.join(dir, DRIVER_FILES.removed))]);
    let exit = await readIntFile(path.join(dir, DRIVER_FILES.exit));
    const appId = await findAppId(dir);
    const base: DriverStatus = { phase: DriverPhase.PENDING, ...(appId && { appId }), ...(pid && { startTime: Math.round(pid.mtimeMs) }) };

    // A driver that ended on its own before remove() keeps its outcome (the job's logs still say how it ended).
    if (removed && !(exit && exit.mtimeMs <= removed.mtimeMs)) {
      return { ...base, phase: DriverPhase.FAILED, message: 'removed', endTime: Math.round(removed.mtimeMs), ...(exit && { exitCode: exit.value }) };
    }
    if (!exit && pid) {
      if (await groupAlive(pid.value, dir)) return { ...base, phase: DriverPhase.RUNNING };
      // The wrapper writes the exit file before it ends, so a group seen gone has written it if it ever will.
      exit = await readIntFile(path.join(dir, DRIVER_FILES.exit));
      if (!exit) {
        return {
          ...base,
          phase: DriverPhase.FAILED,
          message: 'driver process ended without recording an exit code (killed?)',
          endTime: Math.round((await statOrUndefined(path.join(dir, DRIVER_FILES.log)))?.mtimeMs ?? Date.now()),
        };
      }
    }
    if (exit) {
      const endTime = Math.round(exit.mtimeMs);
      if (exit.value === 0) return { ...base, phase: DriverPhase.SUCCEEDED, exitCode: 0, endTime };
      const detail = await failureSummary(path.join(dir, DRIVER_FILES.log));
      const message = `driver exited with code ${exit.value}${detail ? `: ${detail}` : ''}`;
      return { ...base, phase: DriverPhase.FAILED, exitCode: exit.value, message, endTime };
    }
    if (Date.now() - dirStat.mtimeMs > LAUNCH_STALE_MS) {
      return { ...base, phase: DriverPhase.FAILED, message: 'launch was interrupted before the driver process started' };
    }
    return base;
  }

  async function logs(driverId: string, range: LogRange): Promise<JobLogEntry[]> {
    const dir = driverDir(driverId);
    if (!existsSync(dir)) return [];
    const fileName = path.join(dir, DRIVER_FILES.log);
    const from = Math.max(0, Math.floor(range.from));
    const [s, log] = await Promise.all([status(driverId), readLineRange(fileName, from, Math.max(0, Math.floor(range.size)))]);
    return [{ name: driverId, type: 'process', role: 'driver', state: s.phase, from, logSize: log.length, fileName, log }];
  }

  async function remove(driverId: string): Promise<void> {
    const dir = driverDir(driverId);
    if (!existsSync(dir)) return;
    // The marker goes first: a status call during the kill must read 'removed', not 'killed?'.
    if (!existsSync(path.join(dir, DRIVER_FILES.removed))) await writeFileAtomic(path.join(dir, DRIVER_FILES.removed), `${new Date().toISOString()}\n`);
    let pid = await readIntFile(path.join(dir, DRIVER_FILES.pid));
    if (!pid && !existsSync(path.join(dir, DRIVER_FILES.exit))) {
      // A launch between mkdir and the wrapper's first line: give it the moment it needs to write its pid.
      await waitUntil(() => existsSync(path.join(dir, DRIVER_FILES.pid)), 2_000);
      pid = await readIntFile(path.join(dir, DRIVER_FILES.pid));
    }
    if (pid) await killDriver(pid.value, dir);
  }

  return { launch, status, logs, remove };
}

const usesPython = (spec: DriverSpec): boolean => spec.role === 'runner' || spec.spark.language === 'PYTHON';

/**
 * The spark-submit command line of a driver. Throws an Error naming what is missing when the spec
 * has no runnable main resource (the caller makes that a non-retryable failure).
 */
export function sparkSubmitArgs(spec: DriverSpec, config: Pick<LocalAdapterConfig, 'SPARK_HOME' | 'DRIVER_DIR' | 'LOCAL_SPARK_THREADS' | 'STACK_DIR'>, runnerPath: string): string[] {
  const s = spec.spark;
  const { jars, files, pyFiles } = s.artifacts;
  for (const p of [...jars, ...files, ...pyFiles]) {
    if (!path.isAbsolute(p)) throw new InvalidSpecError(`artifact path ${p} is not absolute`);
  }

  let main: string;
  let mainClass: string | undefined;
  let extraJars = jars;
  let extraPyFiles: string[] = [];
  if (spec.role === 'runner') {
    main = runnerPath;
    extraPyFiles = pyFiles;
    // SCALA groups: the job interface and the runner's JVM classes, ahead of the group's jars.
    if (s.language === 'SCALA') extraJars = [...localRunnerJars(config.STACK_DIR), ...jars];
  } else if (s.language === 'SCALA') {
    if (!s.jobClass) throw new InvalidSpecError('SCALA job has no jobClass (the main class to run)');
    if (jars.length === 0) throw new InvalidSpecError(`SCALA job has no jar to find its main class ${s.jobClass} in`);
    mainClass = s.jobClass;
    main = jars[0];
    extraJars = jars.slice(1);
    extraPyFiles = pyFiles;
  } else {
    if (!s.jobClass) throw new InvalidSpecError('PYTHON job has no jobClass (the name of its main file among pyFiles)');
    const jobClass = s.jobClass;
    const found = pyFiles.find((f) => path.basename(f, '.py') === jobClass) ?? pyFiles.find((f) => path.basename(f) === jobClass);
    if (found) main = found;
    else if (path.isAbsolute(jobClass) && jobClass.endsWith('.py') && existsSync(jobClass)) main = jobClass;
    else {
      throw new InvalidSpecError(
        `PYTHON job's main file ${jobClass} is not among its pyFiles${pyFiles.length ? ` (${pyFiles.map((f) => path.basename(f)).join(', ')})` : ' (none uploaded)'}`,
      );
    }
    extraPyFiles = pyFiles.filter((f) => f !== main);
  }
  if (!existsSync(main)) throw new InvalidSpecError(`main resource ${main} does not exist`);

  const conf: Record<string, string> = {
    // The event log's file name is the application id, which Spark logs nowhere else in local mode.
    'spark.eventLog.enabled': 'true',
    'spark.eventLog.dir': pathToFileURL(path.join(path.resolve(config.DRIVER_DIR), spec.driverId, DRIVER_FILES.eventLog)).href,
    ...memorySparkConf(s.memorySettings),
    ...s.jobConfig,
  };
  const args = ['--master', `local[${config.LOCAL_SPARK_THREADS}]`, '--name', s.name || spec.driverId];
  if (mainClass) args.push('--class', mainClass);
  for (const [k, v] of Object.entries(conf)) args.push('--conf', `${k}=${v}`);
  if (conf['spark.driver.memory']) args.push('--driver-memory', conf['spark.driver.memory']);
  if (s.packages.length) args.push('--packages', s.packages.join(','));
  if (extraJars.length) args.push('--jars', extraJars.join(','));
  if (files.length) args.push('--files', files.join(','));
  if (extraPyFiles.length) args.push('--py-files', extraPyFiles.join(','));
  return [path.join(config.SPARK_HOME, 'bin', 'spark-submit'), ...args, main, ...s.args];
}

// ---- Python environments for pyRequirements --------------------------------------------------------

/** Builds in progress in this process, by folder: concurrent launches share one build. */
const pyEnvBuilds = new Map<string, Promise<void>>();

/**
 * The interpreter for a driver with these requirements: config.PYTHON when there are none, else
 * the python of a venv under STACK_DIR/pyenvs/<hash>, built once per (interpreter, sorted list).
 * The venv sees config.PYTHON's own packages (pyspark, temporalio, ilum-job-api) through a .pth file,
 * since --system-site-packages alone reaches only the base interpreter's when PYTHON is itself a venv;
 * that also lets it use PYTHON's pip instead of bootstrapping its own.
 */
export async function pythonFor(config: Pick<LocalAdapterConfig, 'PYTHON' | 'STACK_DIR'>, requirements: string[]): Promise<string> {
  const list = [...new Set(requirements.map((r) => r.trim()).filter(Boolean))].sort();
  if (list.length === 0) return config.PYTHON;
  const option = list.find((r) => r.startsWith('-'));
  // An entry like --index-url would reconfigure pip rather than name a package.
  if (option) throw new InvalidSpecError(`pyRequirements entry ${option} is a pip option, not a requirement`);
  const hash = createHash('sha256').update(JSON.stringify({ python: config.PYTHON, requirements: list })).digest('hex').slice(0, 16);
  const envDir = path.join(config.STACK_DIR, 'pyenvs', hash);
  const python = path.join(envDir, 'bin', 'python');
  if (existsSync(path.join(envDir, '.ready'))) return python;
  let build = pyEnvBuilds.get(envDir);
  if (!build) {
    build = buildPyEnv(config.PYTHON, envDir, list).finally(() => pyEnvBuilds.delete(envDir));
    pyEnvBuilds.set(envDir, build);
  }
  await build;
  return python;
}

async function buildPyEnv(basePython: string, envDir: string, requirements: string[]): Promise<void> {
  const ready = path.join(envDir, '.ready');
  const lock = `${envDir}.lock`;
  await fs.mkdir(path.dirname(envDir), { recursive: true });
  // Other processes (more workers on this host) build under the same lock folder.
  const deadline = Date.now() + PIP_TIMEOUT_MS + 60_000;
  for (;;) {
    if (existsSync(ready)) return;
    try {
      await fs.mkdir(lock);
      break;
    } catch (e) {
      if (errCode(e) !== 'EEXIST') throw e;
    }
    if (await lockIsStale(lock)) {
      // Renaming first means only one of several waiters breaks it.
      const trash = `${lock}.stale-${randomUUID().slice(0, 8)}`;
      if (await fs.rename(lock, trash).then(() => true, () => false)) await fs.rm(trash, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for another process to build the Python environment ${envDir}`);
    await sleep(500);
  }
  try {
    await fs.writeFile(path.join(lock, 'owner'), JSON.stringify({ host: os.hostname(), pid: process.pid }));
    if (existsSync(ready)) return;
    await fs.rm(envDir, { recursive: true, force: true });
    const venv = await run(basePython, ['-m', 'venv', '--system-site-packages', '--without-pip', envDir], 60_000);
    if (venv.code !== 0) throw new Error(`creating the Python environment failed (exit ${venv.code}): ${lastLines(venv.output, 10)}`);
    const envPython = path.join(envDir, 'bin', 'python');
    const sitesOf = async (py: string): Promise<string[]> => {
      const r = await run(py, ['-c', 'import json, site; print(json.dumps(site.getsitepackages()))'], 30_000);
      if (r.code !== 0) throw new Error(`${py} cannot list its site-packages: ${lastLines(r.output, 5)}`);
      return JSON.parse(r.output.trim().split('\n').pop() ?? '[]') as string[];
    };
    const [parentSites, ownSites] = await Promise.all([sitesOf(basePython), sitesOf(envPython)]);
    const inherited = parentSites.filter((p) => !ownSites.includes(p));
    await fs.writeFile(path.join(ownSites[0], '_spark_orchestrator_parent.pth'), inherited.join('\n') + '\n');
    const pip = await run(envPython, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...requirements], PIP_TIMEOUT_MS);
    if (pip.code !== 0) {
      await fs.rm(envDir, { recursive: true, force: true });
      throw new InvalidSpecError(`pip install ${requirements.join(' ')} failed (exit ${pip.code ?? 'timeout'}):\n${lastLines(pip.output, 15)}`);
    }
    await fs.writeFile(ready, new Date().toISOString() + '\n');
  } finally {
    await fs.rm(lock, { recursive: true, force: true });
  }
}

async function lockIsStale(lock: string): Promise<boolean> {
  const st = await statOrUndefined(lock);
  if (!st) return false;
  try {
    const owner = JSON.parse(await fs.readFile(path.join(lock, 'owner'), 'utf8')) as { host: string; pid: number };
    if (owner.host === os.hostname() && owner.pid !== process.pid && !pidAlive(owner.pid)) return true;
  } catch {
    // No owner yet: the builder is between mkdir and writing it, unless it died there.
    return Date.now() - st.mtimeMs > 60_000;
  }
  return Date.now() - st.mtimeMs > PIP_TIMEOUT_MS + 60_000;
}

/** Runs a command to its end; output is stdout and stderr interleaved, its last 64 KiB kept. */
function run(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    const keep = (b: Buffer) => {
      output = (output + b.toString('utf8')).slice(-64 * 1024);
    };
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ code: null, output: `${output}${e.message}\n` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const lastLines = (text: string, n: number): string =>
  text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean)
    .slice(-n)
    .join('\n');

// ---- processes -----------------------------------------------------------------------------------

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errCode(e) === 'EPERM';
  }
}

/**
 * Whether the driver's process group still has members. A group id can only be reused once its
 * group is empty, but after a reboot the number may lead someone else's group: where /proc shows the
 * leader, its working directory must be the driver folder.
 */
async function groupAlive(pgid: number, dir: string): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false; // ESRCH: gone; EPERM: another user's group, so not ours
  }
  try {
    const [cwd, real] = await Promise.all([fs.readlink(`/proc/${pgid}/cwd`), fs.realpath(dir)]);
    return cwd === real;
  } catch {
    return true; // no /proc, or a leader that has just ended while other members remain
  }
}

/** Pids of the group's members and all their descendants (Linux /proc; empty elsewhere). */
async function groupTree(pgid: number): Promise<number[]> {
  let entries: string[];
  try {
    entries = (await fs.readdir('/proc')).filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  const procs: { pid: number; ppid: number; pgrp: number }[] = [];
  await Promise.all(
    entries.map(async (e) => {
      try {
        const stat = await fs.readFile(`/proc/${e}/stat`, 'utf8');
        // Fields after the command name, which is in parentheses and may hold spaces.
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        procs.push({ pid: Number(e), ppid: Number(rest[1]), pgrp: Number(rest[2]) });
      } catch {
        // ended while we looked
      }
    }),
  );
  const tree = new Set(procs.filter((p) => p.pgrp === pgid).map((p) => p.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs) {
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

const signal = (pid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
};

/**
 * SIGTERM to the group (the JVM's shutdown hooks stop Spark), SIGKILL after the grace. Descendants
 * that left the group are signalled one by one: PySpark's worker daemon makes its own group.
 */
async function killDriver(pgid: number, dir: string): Promise<void> {
  if (!(await groupAlive(pgid, dir))) return;
  const tree = await groupTree(pgid);
  signal(-pgid, 'SIGTERM');
  for (const pid of tree) signal(pid, 'SIGTERM');
  const allGone = async () => !(await groupAlive(pgid, dir)) && tree.every((pid) => !pidAlive(pid) || isZombie(pid));
  if (await waitUntilAsync(allGone, TERM_GRACE_MS)) return;
  const late = [...new Set([...tree, ...(await groupTree(pgid))])];
  signal(-pgid, 'SIGKILL');
  for (const pid of late) signal(pid, 'SIGKILL');
  await waitUntilAsync(allGone, 2_000);
}

function isZombie(pid: number): boolean {
  try {
    // A zombie has ended; only its parent's reaping is left.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

// ---- files -----------------------------------------------------------------------------------------

async function findAppId(dir: string): Promise<string | undefined> {
  const cache = path.join(dir, DRIVER_FILES.appId);
  const cached = await fs.readFile(cache, 'utf8').then((s) => s.trim(), () => '');
  if (cached) return cached;
  const fromEventLog = (await fs.readdir(path.join(dir, DRIVER_FILES.eventLog)).catch(() => [] as string[])).map((f) => APP_ID.exec(f)?.[0]).find(Boolean);
  const appId = fromEventLog ?? (await scanHead(path.join(dir, DRIVER_FILES.log), APP_ID_SCAN_BYTES, APP_ID));
  if (appId) await writeFileAtomic(cache, appId + '\n').catch(() => undefined);
  return appId;
}

async function scanHead(file: string, bytes: number, re: RegExp): Promise<string | undefined> {
  const fh = await fs.open(file, 'r').catch(() => undefined);
  if (!fh) return undefined;
  try {
    const buf = Buffer.alloc(Math.min(bytes, (await fh.stat()).size));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return re.exec(buf.subarray(0, bytesRead).toString('utf8'))?.[0];
  } finally {
    await fh.close();
  }
}

async function readTail(file: string, bytes: number): Promise<string[]> {
  const fh = await fs.open(file, 'r').catch(() => undefined);
  if (!fh) return [];
  try {
    const { size } = await fh.stat();
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    await fh.read(buf, 0, buf.length, start);
    const lines = buf.toString('utf8').split('\n');
    if (start > 0) lines.shift(); // began mid-line
    return lines.map((l) => l.replace(/\r$/, ''));
  } finally {
    await fh.close();
  }
}

async function failureSummary(logFile: string): Promise<string | undefined> {
  return summarizeFailure(await readTail(logFile, ERROR_TAIL_BYTES));
}

const LOG4J_LINE = /^\d\d\/\d\d\/\d\d \d\d:\d\d:\d\d /;
const JAVA_EXCEPTION = /^(?:Exception in thread "[^"]*" )?((?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b.*)$/;
const MAX_MESSAGE = 1_000;

/**
 * The lines of a driver log that say why it failed: the last Python traceback's exception (with the
 * Java exception Py4J reports under it), else the last Java exception and its root cause, else
 * spark-submit's own error, else the last ERROR line.
 */
export function summarizeFailure(lines: string[]): string | undefined {
  const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s);
  const tb = findLastIndex(lines, (l) => l.startsWith('Traceback (most recent call last):'));
  if (tb >= 0) {
    for (let i = tb + 1; i < lines.length; i++) {
      const l = lines[i];
      // Frames and source lines are indented; Spark's own log lines may interleave.
      if (l.trim() === '' || /^\s/.test(l) || LOG4J_LINE.test(l)) continue;
      const parts = [l];
      for (let j = i + 1; j < lines.length && parts.length < 3 && lines[j].startsWith(': '); j++) parts.push(lines[j].slice(2));
      return clip(parts.join(' '));
    }
  }
  const top = findLastIndex(lines, (l) => JAVA_EXCEPTION.test(l));
  if (top >= 0) {
    let cause: string | undefined;
    for (let i = top + 1; i < lines.length && (/^\s/.test(lines[i]) || lines[i].startsWith('Caused by: ')); i++) {
      if (lines[i].startsWith('Caused by: ')) cause = lines[i].slice('Caused by: '.length);
    }
    const head = JAVA_EXCEPTION.exec(lines[top])![1];
    return clip(cause ? `${head} (caused by ${cause})` : head);
  }
  // spark-submit's own refusals ("Error: Failed to load class …", "Error: Missing application resource.").
  const submitError = findLastIndex(lines, (l) => l.startsWith('Error: '));
  if (submitError >= 0) return clip(lines[submitError].slice('Error: '.length));
  const err = findLastIndex(lines, (l) => / ERROR /.test(l));
  return err >= 0 ? clip(lines[err].replace(LOG4J_LINE, '')) : undefined;
}

/**
 * Lines [from, from+size) of a file, read as a stream that stops once it has them: newlines are
 * counted on raw bytes, and only the wanted lines are decoded.
 */
export async function readLineRange(file: string, from: number, size: number): Promise<string[]> {
  const out: string[] = [];
  if (size <= 0 || !existsSync(file)) return out;
  const stream = createReadStream(file, { highWaterMark: 1 << 16 });
  let line = 0;
  let current: Buffer[] = [];
  const decode = () => Buffer.concat(current).toString('utf8').replace(/\r$/, '');
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      for (let pos = 0; pos < chunk.length; ) {
        const nl = chunk.indexOf(10, pos);
        const end = nl === -1 ? chunk.length : nl;
        if (line >= from) current.push(chunk.subarray(pos, end));
        if (nl === -1) break;
        if (line >= from) {
          out.push(decode());
          current = [];
          if (out.length >= size) return out;
        }
        line++;
        pos = nl + 1;
      }
    }
    // A last line without its newline yet (the driver may still be writing it).
    if (current.some((b) => b.length > 0)) out.push(decode());
    return out;
  } finally {
    stream.destroy();
  }
}

async function readIntFile(file: string): Promise<{ value: number; mtimeMs: number } | undefined> {
  try {
    const [text, st] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
    const value = Number.parseInt(text.trim(), 10);
    return Number.isFinite(value) ? { value, mtimeMs: st.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

async function writeFileAtomic(file: string, content: string): Promise<void> {
  const tmp = `${file}.${randomUUID().slice(0, 8)}.tmp`;
  await fs.writeFile(tmp, content);
  await fs.rename(tmp, file);
}

const statOrUndefined = (p: string) => fs.stat(p).catch(() => undefined);

const errCode = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code;

function findLastIndex<T>(a: T[], pred: (v: T) => boolean): number {
  for (let i = a.length - 1; i >= 0; i--) if (pred(a[i])) return i;
  return -1;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  return waitUntilAsync(async () => cond(), timeoutMs);
}

async function waitUntilAsync(cond: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
}
