// Starts the dev stack's servers as child processes: the Temporal dev server (with its UI and the
// service's search attributes) and mongo-java-server; and says how the API and worker processes run.
// Used by scripts/stack.ts and by testkit/.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { MongoClient } from 'mongodb';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SearchAttr } from '../domain/ids';
import { ROOT } from '../lib/config';

export interface ServicesOptions {
  stackDir: string;
  dataDir: string;
  logDir: string;
  temporalPort: number;
  temporalUiPort: number;
  mongoPort: number;
  /** Keep data in files (default) or in memory. */
  persistent: boolean;
  headless?: boolean;
  /** More `--dynamic-config-value KEY=VALUE` settings (tests). */
  dynamicConfig?: Record<string, string | number | boolean>;
}

/**
 * How the API and worker processes run: `dist`, the compiled JavaScript of `npm run build` (npm start), or
 * `tsx`, the TypeScript sources (development, tests, benchmarks).
 */
export type ServiceRunner = 'dist' | 'tsx';

export function serviceCommand(name: 'api' | 'worker', runner: ServiceRunner): { cmd: string; args: string[] } {
  // tsx's loader inside node itself, not the tsx command (which runs node as its child): a signal to the
  // pid reaches the service, and a kill -9 leaves no orphan holding the port.
  if (runner === 'tsx') {
    const loader = pathToFileURL(path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
    return { cmd: process.execPath, args: ['--import', loader, path.join(ROOT, name, 'main.ts')] };
  }
  const entry = path.join(ROOT, 'dist', `${name}.js`);
  if (!existsSync(entry)) throw new Error(`${path.relative(ROOT, entry)} is missing: run npm run build`);
  return { cmd: process.execPath, args: ['--enable-source-maps', entry] };
}

export interface Services {
  temporalAddress: string;
  mongoUrl: string;
  stop(): Promise<void>;
}

export function waitForPort(port: number, timeoutMs: number, proc?: ChildProcess, what = 'server'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (proc && proc.exitCode !== null) return reject(new Error(`${what} exited with code ${proc.exitCode}`));
      const s = net.connect({ port, host: '127.0.0.1' });
      s.once('connect', () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error(`${what} did not listen on port ${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

/**
 * Resolves once the process itself prints a line matching `ready`: its own word that it listens, which a port
 * that some other process happened to take while this one started cannot pass for. Rejects, with the end of
 * its output, if it exits first or the time runs out.
 */
export function waitForOutput(proc: ChildProcess, ready: RegExp, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const done = (err?: Error) => {
      clearTimeout(timer);
      proc.stdout?.off('data', onData);
      proc.stderr?.off('data', onData);
      proc.off('close', onExit);
      proc.off('exit', onEarlyExit);
      if (err) reject(err);
      else resolve();
    };
    const tail = () => (seen.trim() ? `; its last output:\n${seen.trim().split('\n').slice(-15).join('\n')}` : '');
    const onData = (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-8192);
      if (ready.test(seen)) done();
    };
    const onExit = (code: number | null, sig: string | null) =>
      done(new Error(`${what} exited (${code ?? sig}) before it was ready${tail()}`));
    const timer = setTimeout(() => done(new Error(`${what} was not ready within ${timeoutMs} ms${tail()}`)), timeoutMs);
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    // Its last output may still be in the pipes when it has exited: 'close' comes once they are read, or, if a
    // child of its own holds them open, a moment after 'exit'.
    const onEarlyExit = (code: number | null, sig: string | null) => setTimeout(() => onExit(code, sig), 500).unref();
    proc.on('close', onExit);
    proc.on('exit', onEarlyExit);
    if (proc.exitCode !== null || proc.signalCode !== null) onExit(proc.exitCode, proc.signalCode);
  });
}

/**
 * Starts a command with stdout and stderr appended to logFile. `detached`: in its own process group, so a
 * Ctrl-C in the terminal reaches only the parent, which stops its children in order.
 */
export function startLogged(cmd: string, args: string[], logFile: string, detached = false): ChildProcess {
  const out = createWriteStream(logFile, { flags: 'a' });
  const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env, detached });
  p.stdout?.pipe(out);
  p.stderr?.pipe(out);
  return p;
}

/** SIGTERM, then SIGKILL after 10 s. */
export const stopProc = (p: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
    p.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    p.kill('SIGTERM');
  });

/**
 * Until the server has answered a command, for up to `timeoutMs`: a service's own connect gives server
 * selection 10 s (lib/mongo.ts). In CI (2026-11-27) a test's first connect after a restart got no answer
 * within those 10 s, cause unknown; a cold first command measured 0.4-0.8 s under 14 busy loops here.
 */
export async function waitForMongo(url: string, timeoutMs: number): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: timeoutMs, connectTimeoutMS: timeoutMs });
  try {
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The URL of the dev MongoDB-protocol server on this machine's loopback. */
export const localMongoUrl = (port: number) => `mongodb://127.0.0.1:${port}/?directConnection=true`;

/** The line scripts/mongo/Launcher.java prints once it listens. */
export const MONGO_READY = (port: number) => new RegExp(`mongo-java-server listening on \\S+:${port}\\b`);

export interface Command {
  cmd: string;
  args: string[];
}

/** The Temporal dev server's and mongo-java-server's command lines; throws if setup.sh has not installed them. */
export function serverCommands(o: ServicesOptions): { temporal: Command; mongo: Command } {
  for (const d of [o.dataDir, o.logDir]) mkdirSync(d, { recursive: true });
  const temporalBin = path.join(o.stackDir, 'venv', 'bin', 'temporal');
  const cpFile = path.join(o.stackDir, 'mongo-classpath.txt');
  if (!existsSync(temporalBin) || !existsSync(cpFile))
    throw new Error(`dev stack not installed in ${o.stackDir}: run scripts/setup.sh`);

  const temporalArgs = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(o.temporalPort),
    '--ui-port',
    String(o.temporalUiPort),
    '--log-level',
    'warn',
    // Updates and update-with-start (read-your-writes on create).
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    '--dynamic-config-value',
    'frontend.enableExecuteMultiOperation=true',
    // One partition per task queue: a poller and a task always meet at once (no forwarding between
    // partitions), which is what a group's few runners need for millisecond dispatch.
    '--dynamic-config-value',
    'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value',
    'matching.numTaskqueueWritePartitions=1',
    // The history service reads its transfer queue (new workflow and activity tasks) at most 20 times a
    // second by default, which adds up to ~25 ms to every hand-off; measured: a trivial workflow with one
    // activity goes from 100 ms to 42 ms end to end on this machine.
    '--dynamic-config-value',
    'history.transferProcessorMaxPollRPS=1000',
    // The CLI's dev server re-reads the search attribute list from its database on every use (a start with
    // search attributes, each upsert); they are all registered right here at start, so the cache is safe.
    '--dynamic-config-value',
    'system.forceSearchAttributesCacheRefreshOnRead=false',
    ...Object.values(SearchAttr).flatMap((n) => ['--search-attribute', `${n}=Keyword`]),
    ...Object.entries(o.dynamicConfig ?? {}).flatMap(([k, v]) => [
      '--dynamic-config-value',
      `${k}=${JSON.stringify(v)}`,
    ]),
  ];
  if (o.persistent) {
    // WAL without an fsync per commit: a crash of any process loses nothing (the OS has the pages); only
    // a power cut could lose the last writes. Each workflow step is one commit, so this is the latency floor.
    temporalArgs.push(
      '--db-filename',
      path.join(o.dataDir, 'temporal.db'),
      '--sqlite-pragma',
      'journal_mode=wal',
      '--sqlite-pragma',
      'synchronous=normal',
    );
  }
  if (o.headless) temporalArgs.push('--headless');

  const mongoArgs = [
    '-Xmx512m',
    // No performance counters: the JVM samples them every 50 ms, idle or not (20 wake-ups a second, half the
    // idle server's; bench:idle). jstat and jps no longer see this JVM; jcmd and jmap still do.
    '-XX:-UsePerfData',
    '-cp',
    readFileSync(cpFile, 'utf8').trim(),
    path.join(ROOT, 'scripts', 'mongo', 'Launcher.java'),
    '127.0.0.1',
    String(o.mongoPort),
  ];
  if (o.persistent) mongoArgs.push(path.join(o.dataDir, 'mongo.mv'));
  return { temporal: { cmd: temporalBin, args: temporalArgs }, mongo: { cmd: 'java', args: mongoArgs } };
}

export async function startServices(o: ServicesOptions): Promise<Services> {
  const mongoUrl = localMongoUrl(o.mongoPort);
  const cmds = serverCommands(o);
  const temporal = startLogged(cmds.temporal.cmd, cmds.temporal.args, path.join(o.logDir, 'temporal.log'));
  const mongo = startLogged(cmds.mongo.cmd, cmds.mongo.args, path.join(o.logDir, 'mongo.log'));

  const stop = async () => {
    await Promise.all([stopProc(temporal), stopProc(mongo)]);
  };
  try {
    await Promise.all([
      waitForPort(o.temporalPort, 60_000, temporal, 'temporal dev server'),
      waitForOutput(
        temporal,
        new RegExp(`Temporal Server:\\s+\\S+:${o.temporalPort}\\b`),
        60_000,
        'temporal dev server',
      ),
      waitForOutput(mongo, MONGO_READY(o.mongoPort), 60_000, 'mongo-java-server').then(() =>
        waitForMongo(mongoUrl, 60_000),
      ),
    ]);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    temporalAddress: `127.0.0.1:${o.temporalPort}`,
    mongoUrl,
    stop,
  };
}

/**
 * Stops every local driver under a DRIVER_DIR (each folder's `pid` is its process group): the dev stack's
 * `down` and the end of a test run use it, so no Spark JVM outlives what started it.
 */
export async function killDrivers(driverDir: string): Promise<number> {
  const groups: number[] = [];
  for (const d of existsSync(driverDir) ? readdirSync(driverDir) : []) {
    const pid = Number(readFileSafe(path.join(driverDir, d, 'pid')));
    if (pid > 0 && alive(-pid)) groups.push(pid);
  }
  for (const pid of groups) signal(-pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (groups.some((pid) => alive(-pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of groups) if (alive(-pid)) signal(-pid, 'SIGKILL');
  return groups.length;
}

const readFileSafe = (p: string) => {
  try {
    return readFileSync(p, 'utf8').trim();
  } catch {
    return '';
  }
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
};
