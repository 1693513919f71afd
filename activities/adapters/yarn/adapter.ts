// The `yarn` cluster adapter: each driver is a YARN application in cluster deploy mode (an SQL engine: in client
// mode, see sql-engine.ts), submitted by
// spark-submit (`--master yarn`, the Hadoop client in pyspark's jars) with a Hadoop configuration folder made
// from the cluster's fields. The application carries the tag `so-<driverId>` (lower case: YARN lowers tags), so
// a retried launch finds it instead of submitting a second one, and every other call finds it again from the
// ResourceManager alone.
//
// What is kept on the launching host, in STACK_DIR/yarn/<clusterId>/<driverId>/ (its mkdir is the launch lock):
//   command.json  what was run (argv, the environment it added, secrets redacted)
//   submit.log    spark-submit's output (it exits once the application is submitted)
//   pid, exit     spark-submit's wrapper (local/process.ts)
//   appid         the application id once known
//   conf/         the Hadoop configuration spark-submit read (core-site.xml, yarn-site.xml)
//   removed       marker written by remove() (the folder stays, so an ended job's logs can still be read)
//   endpoint      SQL engines (sql-engine.ts: the Thrift Server in client mode, its driver this folder's
//                 process): JSON {host, port} of where it listens; submit.log is then the driver's log
//
// State: the ResourceManager's application report (RUNNING, FINISHED + finalStatus, FAILED, KILLED), its
// diagnostics as the reason; a ResourceManager that does not answer is UNKNOWN with the cause. Logs: the
// driver's container (the AM's, `_000001`) and the executors' containers from the AM's NodeManager's REST API
// (no log aggregation needed); with yarn.log-aggregation-enable in hadoopConf, an ended application's from the
// aggregated files (aggregated-logs.ts). Remove: kill the application unless it has ended; the folder stays.
// Over 300 lines on purpose: launch, status, logs and remove of one adapter over one context; the pure parts
// are split out (submit-args.ts, status.ts, sql-engine.ts, aggregated-logs.ts, rest.ts).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  DriverPhase,
  InvalidSpecError,
  type ClusterAdapter,
  type DriverSpec,
  type DriverStatus,
  type LogRange,
} from '../../../domain/driver';
import type { EngineEndpoint } from '../../../domain/sql-engine';
import type { JobLogEntry } from '../../../domain/types';
import { ROOT } from '../../../lib/config';
import { redact } from '../../../lib/log';
import { childEnv } from '../local/child-env';
import { errCode, readEndpoint, readIntFile, writeFileAtomic } from '../local/driver-files';
import { readLineRange } from '../local/logs';
import { groupAlive, killDriver, sleep, spawnDriver, waitUntil } from '../local/process';
import { freePort, OPERATION_LOG_DIR } from '../local/sql-engine';
import { writeHadoopConfDir } from './hadoop-conf';
import { YarnUnreachable, yarnRest, type YarnApp, type YarnRest } from './rest';
import { AGGREGATED_FILES, AGGREGATING, aggregatedLogs, aggregationOn } from './aggregated-logs';
import { yarnEngineLaunch } from './sql-engine';
import { toStatus } from './status';
import { hadoopProps, yarnSubmitArgs, yarnTag, type YarnAdapterOptions } from './submit-args';

const DRIVER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;
/** Application states after which it runs no container. */
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];
/** How long a logs call waits for an ended application's logs to reach the aggregated files. */
const AGGREGATION_WAIT_MS = 20_000;
/** The files of a driver's folder on the launching host; `removed` also tells the retention sweep it ended. */
export const YARN_DRIVER_FILES = {
  command: 'command.json',
  log: 'submit.log',
  pid: 'pid',
  exit: 'exit',
  appId: 'appid',
  conf: 'conf',
  removed: 'removed',
  endpoint: 'endpoint',
};

interface YarnContext {
  o: YarnAdapterOptions;
  rest: YarnRest;
  dir: string;
  runnerPath: string;
}

export function createYarnAdapter(o: YarnAdapterOptions): ClusterAdapter {
  const y: YarnContext = {
    o,
    rest: yarnRest(o.cluster.url, o.requestTimeoutMs ?? 10_000),
    dir: path.join(o.config.STACK_DIR, 'yarn', o.cluster.id.replace(/[^A-Za-z0-9_-]/g, '_')),
    runnerPath: o.runnerPath ?? path.join(ROOT, 'runner', 'runner.py'),
  };
  return {
    // Its drivers' folders (what status, logs and removal read and write) and its SQL engines' Thrift Servers
    // (client mode) are on the worker host that launched them: every later call runs there (domain/hosts.ts).
    hostBound: true,
    launch: (spec) => launch(y, spec),
    status: async (driverId) => status(y, driverId),
    logs: (driverId, range) => logs(y, driverId, range),
    remove: (driverId) => remove(y, driverId),
  };
}

function driverDir(y: YarnContext, driverId: string): string {
  if (!DRIVER_ID.test(driverId)) throw new InvalidSpecError(`invalid driverId '${driverId}'`);
  return path.join(y.dir, driverId);
}

/**
 * The runner's Python package (runner/spark_runner) as a zip beside runner.py for --py-files: in cluster mode
 * only the files spark-submit ships reach the application master's container. Made once per content.
 */
async function runnerPackage(y: YarnContext): Promise<string> {
  const src = path.join(path.dirname(y.runnerPath), 'spark_runner');
  // Named by its content: a changed runner gets a new zip, never a stale one.
  const files = (await fs.readdir(src, { recursive: true }))
    .map(String)
    .filter((f) => f.endsWith('.py'))
    .sort();
  const hash = createHash('sha256');
  for (const f of files) hash.update(f).update(await fs.readFile(path.join(src, f)));
  const zip = path.join(y.o.config.STACK_DIR, 'yarn', `spark_runner-${hash.digest('hex').slice(0, 16)}.zip`);
  if (!existsSync(zip)) {
    await fs.mkdir(path.dirname(zip), { recursive: true });
    const tmp = `${zip}.${process.pid}.tmp`;
    const py =
      'import sys, zipfile, pathlib\nsrc = pathlib.Path(sys.argv[1])\nwith zipfile.ZipFile(sys.argv[2], "w") as z:\n    for f in sorted(src.rglob("*.py")):\n        z.write(f, f.relative_to(src.parent))\n';
    await new Promise<void>((resolve, reject) =>
      execFile(y.o.config.PYTHON, ['-c', py, src, tmp], (e) => (e ? reject(e) : resolve())),
    );
    await fs.rename(tmp, zip);
  }
  return zip;
}

async function launch(y: YarnContext, spec: DriverSpec): Promise<DriverStatus> {
  const dir = driverDir(y, spec.driverId);
  const runnerZip = spec.role === 'runner' ? await runnerPackage(y) : undefined;
  // Validated before the lock: an invalid spec leaves no folder behind.
  const engine = spec.role === 'sql-engine' ? yarnEngineLaunch(spec, y.o, dir, await freePort()) : undefined;
  const argv = [
    path.join(y.o.config.SPARK_HOME, 'bin', 'spark-submit'),
    ...(engine?.args ?? yarnSubmitArgs(spec, y.o, y.runnerPath, runnerZip)),
  ];
  await fs.mkdir(y.dir, { recursive: true });
  try {
    await fs.mkdir(dir);
  } catch (e) {
    if (errCode(e) === 'EEXIST') return status(y, spec.driverId);
    throw e;
  }
  // Launched from another host, or before this folder was lost: the application is there already.
  let existing: YarnApp | undefined;
  try {
    existing = await findApp(y, spec.driverId);
  } catch (e) {
    await fs.rm(dir, { recursive: true, force: true });
    throw e;
  }
  if (existing) {
    await writeFileAtomic(path.join(dir, YARN_DRIVER_FILES.appId), existing.id);
    return toStatus(existing);
  }
  if (engine) {
    await fs.mkdir(path.join(dir, OPERATION_LOG_DIR));
    await writeFileAtomic(path.join(dir, YARN_DRIVER_FILES.endpoint), `${JSON.stringify(engine.endpoint)}\n`);
  }
  const confDir = path.join(dir, YARN_DRIVER_FILES.conf);
  await writeHadoopConfDir(confDir, hadoopProps(y.o.cluster));
  // Only an allow-list of the worker's environment: no service setting or secret reaches the submitter.
  const added = {
    HADOOP_CONF_DIR: confDir,
    YARN_CONF_DIR: confDir,
    SPARK_HOME: y.o.config.SPARK_HOME,
    PYSPARK_PYTHON: y.o.config.PYTHON,
    ...engine?.env,
  };
  await writeFileAtomic(
    path.join(dir, YARN_DRIVER_FILES.command),
    JSON.stringify(
      {
        driverId: spec.driverId,
        role: spec.role,
        argv: argv.map(redactArg),
        env: added,
        labels: spec.labels,
        launchedAt: Date.now(),
      },
      null,
      2,
    ),
  );
  const logFile = path.join(dir, YARN_DRIVER_FILES.log);
  const spawnError = await spawnDriver(dir, argv, childEnv('driver', added), logFile);
  if (spawnError) {
    await fs.appendFile(logFile, `failed to start spark-submit: ${spawnError.message}\n`);
    await writeFileAtomic(path.join(dir, YARN_DRIVER_FILES.exit), '127\n');
  }
  await waitUntil(
    () => existsSync(path.join(dir, YARN_DRIVER_FILES.pid)) || existsSync(path.join(dir, YARN_DRIVER_FILES.exit)),
    2_000,
  );
  return status(y, spec.driverId);
}

/** appMasterEnv values may carry a runner's secret: command.json shows them redacted. */
function redactArg(a: string): string {
  const m = /^(spark\.yarn\.appMasterEnv\.[^=]+)=(.*)$/.exec(a);
  if (!m) return a;
  const name = m[1].slice('spark.yarn.appMasterEnv.'.length);
  return `${m[1]}=${String((redact({ [name]: m[2] }) as Record<string, unknown>)[name])}`;
}

/** The driver's application: by the recorded id, else by its tag (recorded once found). */
async function findApp(y: YarnContext, driverId: string): Promise<YarnApp | undefined> {
  const dir = driverDir(y, driverId);
  const recorded = await fs.readFile(path.join(dir, YARN_DRIVER_FILES.appId), 'utf8').catch(() => undefined);
  if (recorded) return y.rest.app(recorded.trim());
  const apps = await y.rest.appsByTag(yarnTag(driverId));
  // The newest, should a submission have been repeated.
  const app = apps.sort((a, b) => (b.startedTime ?? 0) - (a.startedTime ?? 0))[0];
  if (app && existsSync(dir)) await writeFileAtomic(path.join(dir, YARN_DRIVER_FILES.appId), app.id);
  return app;
}

async function status(y: YarnContext, driverId: string): Promise<DriverStatus> {
  const dir = driverDir(y, driverId);
  if (!existsSync(dir)) return { phase: DriverPhase.MISSING };
  const endpoint = await readEndpoint(dir);
  if (endpoint) return engineStatus(y, driverId, endpoint);
  let app: YarnApp | undefined;
  try {
    app = await findApp(y, driverId);
  } catch (e) {
    if (e instanceof YarnUnreachable) return unreachable(y, e);
    throw e;
  }
  if (app) return toStatus(app);
  // Not submitted yet, or spark-submit failed before the ResourceManager took it.
  const exit = await readIntFile(path.join(dir, YARN_DRIVER_FILES.exit));
  if (exit && exit.value !== 0) {
    return {
      phase: DriverPhase.FAILED,
      exitCode: exit.value,
      message: `spark-submit failed (exit ${exit.value}): ${await submitFailure(dir)}`,
    };
  }
  if (exit && Date.now() - exit.mtimeMs > 60_000)
    return {
      phase: DriverPhase.FAILED,
      message: 'spark-submit ended but the ResourceManager has no application of this driver',
    };
  return { phase: DriverPhase.PENDING };
}

const unreachable = (y: YarnContext, e: Error): DriverStatus => ({
  phase: DriverPhase.UNKNOWN,
  message: `the ResourceManager of cluster '${y.o.cluster.name}' cannot be asked: ${e.message}`,
});

/**
 * An SQL engine: its driver is this folder's process (client mode), its executors the YARN application's. The
 * process decides whether it runs; the application whether it has executors (RUNNING, with the endpoint).
 */
async function engineStatus(y: YarnContext, driverId: string, endpoint: EngineEndpoint): Promise<DriverStatus> {
  const dir = driverDir(y, driverId);
  const file = (f: keyof typeof YARN_DRIVER_FILES) => path.join(dir, YARN_DRIVER_FILES[f]);
  if (existsSync(file('removed'))) return { phase: DriverPhase.FAILED, message: 'removed' };
  const pid = await readIntFile(file('pid'));
  let exit = await readIntFile(file('exit'));
  if (!exit && pid && !(await groupAlive(pid.value, dir))) {
    exit = await readIntFile(file('exit'));
    if (!exit)
      return { phase: DriverPhase.FAILED, message: 'the engine ended without recording an exit code (killed?)' };
  }
  if (exit) {
    if (exit.value === 0) return { phase: DriverPhase.SUCCEEDED, exitCode: 0 };
    const why = await submitFailure(dir);
    return {
      phase: DriverPhase.FAILED,
      exitCode: exit.value,
      message: `the engine exited with code ${exit.value}: ${why}`,
    };
  }
  let app: YarnApp | undefined;
  try {
    app = await findApp(y, driverId);
  } catch (e) {
    if (e instanceof YarnUnreachable) return unreachable(y, e);
    throw e;
  }
  if (!app) return { phase: DriverPhase.PENDING, endpoint };
  const s = toStatus(app);
  // An ended application (killed, failed): the engine has no executors any more; its process is removed next.
  return s.phase === DriverPhase.RUNNING || s.phase === DriverPhase.PENDING ? { ...s, endpoint } : s;
}

/** The last lines of spark-submit's output that say what went wrong. */
async function submitFailure(dir: string): Promise<string> {
  const text = await fs.readFile(path.join(dir, YARN_DRIVER_FILES.log), 'utf8').catch(() => '');
  const lines = text.split('\n').filter((l) => /Exception|Error|error:|refused|denied/.test(l));
  return (lines.slice(-3).join(' | ') || text.trim().split('\n').slice(-3).join(' | ')).slice(0, 2000);
}

function slice(text: string | undefined, range: LogRange): string[] {
  if (text === undefined) return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const from = Math.max(0, Math.floor(range.from));
  return lines.slice(from, from + Math.max(0, Math.floor(range.size)));
}

async function logs(y: YarnContext, driverId: string, range: LogRange): Promise<JobLogEntry[]> {
  const dir = driverDir(y, driverId);
  if (!existsSync(dir)) return [];
  const from = Math.max(0, Math.floor(range.from));
  const st = await status(y, driverId);
  const entry = (name: string, role: string, fileName: string, log: string[], state: string): JobLogEntry => ({
    name,
    type: 'yarn-container',
    role,
    state,
    from,
    logSize: log.length,
    fileName,
    log,
  });
  const submitLog = path.join(dir, YARN_DRIVER_FILES.log);
  // An engine's driver is spark-submit's own JVM (client mode); its application master only asks for executors.
  const clientMode = existsSync(path.join(dir, YARN_DRIVER_FILES.endpoint));
  const out: JobLogEntry[] = [
    {
      ...entry(
        driverId,
        clientMode ? 'driver' : 'submit',
        submitLog,
        await readLineRange(submitLog, from, range.size),
        st.phase,
      ),
      type: 'process',
    },
  ];
  let app = st.appId ? await y.rest.app(st.appId).catch(() => undefined) : undefined;
  const am = app?.amContainerLogs ? /\/(container_[A-Za-z0-9_]+)/.exec(app.amContainerLogs)?.[1] : undefined;
  const roleOf = (c: string) => (c !== am ? 'executor' : clientMode ? 'application-master' : 'driver');
  // Ended, on a cluster that aggregates logs: its NodeManagers hand them over to the aggregated files and stop
  // serving them, so they are read there, after a short wait when the handover is still going on.
  if (app && ENDED.includes(app.state) && aggregationOn(y.o)) {
    let agg = await aggregatedLogs(y.o, dir, app);
    for (const until = Date.now() + AGGREGATION_WAIT_MS; !agg && Date.now() < until;) {
      if (!AGGREGATING.includes(app.logAggregationStatus ?? '')) break;
      await sleep(500);
      app = (await y.rest.app(app.id).catch(() => undefined)) ?? app;
      agg = await aggregatedLogs(y.o, dir, app);
    }
    if (agg?.size) {
      for (const c of [...agg.keys()].sort())
        for (const file of AGGREGATED_FILES) {
          const text = agg.get(c)!.get(file);
          if (text === undefined) continue;
          out.push(entry(c, roleOf(c), `${c}/${file}`, slice(text, range), c === am ? st.phase : 'UNKNOWN'));
        }
      return out;
    }
  }
  const nm = app?.amHostHttpAddress ?? (app?.amContainerLogs ? new URL(app.amContainerLogs).host : undefined);
  if (!app || !nm) return out;
  const containers = new Set(await y.rest.containers(nm, app.id).catch(() => [] as string[]));
  if (am) containers.add(am);
  for (const c of [...containers].sort()) {
    const role = roleOf(c);
    for (const file of ['stdout', 'stderr']) {
      const text = await y.rest.containerLog(nm, c, file).catch(() => undefined);
      if (text === undefined) continue;
      out.push(entry(c, role, `${c}/${file}`, slice(text, range), role === 'driver' ? st.phase : 'UNKNOWN'));
    }
  }
  return out;
}

async function remove(y: YarnContext, driverId: string): Promise<void> {
  const dir = driverDir(y, driverId);
  if (!existsSync(dir)) return;
  if (existsSync(path.join(dir, YARN_DRIVER_FILES.endpoint))) return removeEngine(y, driverId);
  // A submission still under way: its application shows up within seconds.
  if (!existsSync(path.join(dir, YARN_DRIVER_FILES.exit)))
    await waitUntil(() => existsSync(path.join(dir, YARN_DRIVER_FILES.exit)), 30_000);
  const app = await findApp(y, driverId);
  if (app && !['FINISHED', 'FAILED', 'KILLED'].includes(app.state)) await y.rest.kill(app.id);
  // The folder stays (with the application id): an ended job's logs are read through it afterwards.
  if (!existsSync(path.join(dir, YARN_DRIVER_FILES.removed)))
    await writeFileAtomic(path.join(dir, YARN_DRIVER_FILES.removed), `${new Date().toISOString()}\n`);
}

/** An engine: its process on this host (the driver), then its application should it outlive it. */
async function removeEngine(y: YarnContext, driverId: string): Promise<void> {
  const dir = driverDir(y, driverId);
  // The marker first: a status call during the kill reads 'removed'.
  if (!existsSync(path.join(dir, YARN_DRIVER_FILES.removed)))
    await writeFileAtomic(path.join(dir, YARN_DRIVER_FILES.removed), `${new Date().toISOString()}\n`);
  let pid = await readIntFile(path.join(dir, YARN_DRIVER_FILES.pid));
  if (!pid && !existsSync(path.join(dir, YARN_DRIVER_FILES.exit))) {
    await waitUntil(() => existsSync(path.join(dir, YARN_DRIVER_FILES.pid)), 2_000);
    pid = await readIntFile(path.join(dir, YARN_DRIVER_FILES.pid));
  }
  if (pid) await killDriver(pid.value, dir);
  const app = await findApp(y, driverId).catch(() => undefined);
  if (app && !['FINISHED', 'FAILED', 'KILLED'].includes(app.state)) await y.rest.kill(app.id);
}
