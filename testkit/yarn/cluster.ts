// A real single-node YARN for tests: a ResourceManager and a NodeManager of Apache Hadoop 3.3.4 (jars fetched by
// scripts/setup-yarn.sh into the cache outside the clone) as child processes, every port on 127.0.0.1 and free,
// the local filesystem as the default filesystem (Spark's staging directory), log aggregation off (container logs
// stay on the NodeManager, which serves them over its REST API) unless asked for (logs of ended containers then go
// to <dir>/app-logs, which clientConf names), DefaultContainerExecutor (containers run as
// this user), vmem/pmem checks off, one `default` queue of the capacity scheduler. Tuned for tests on two cores:
// the NodeManager heartbeats every 250 ms (containers are assigned on its heartbeats), clients, application masters
// and the NodeManager retry a ResourceManager that is down every second (not 30 s), a recovered ResourceManager
// schedules after 1 s (not 10 s), and the daemons' JVMs spend little CPU on compiling. The daemons' output goes
// to files in the cluster's folder, never to the test log.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../servers';
import { sleep } from '../wait';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CACHE =
  process.env.SPARK_ORCH_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? '/root', '.cache'), 'spark-orchestrator');

/** Where scripts/setup-yarn.sh puts the jars. */
export const yarnJarDir = () => path.join(CACHE, 'hadoop-yarn-3.3.4');
const installed = () => existsSync(path.join(yarnJarDir(), '.complete'));

function fetchRunning(): boolean {
  try {
    process.kill(Number(readFileSync(path.join(CACHE, 'hadoop-yarn.lock', 'pid'), 'utf8')), 0);
    return true;
  } catch {
    return false;
  }
}

const javaHome = (): string | undefined => {
  if (process.env.JAVA_HOME && existsSync(path.join(process.env.JAVA_HOME, 'bin', 'java')))
    return process.env.JAVA_HOME;
  for (const d of ['/usr/lib/jvm/java-17-openjdk-amd64', '/usr/lib/jvm/default-java'])
    if (existsSync(path.join(d, 'bin', 'java'))) return d;
  return undefined;
};

/** Whether the jars are there (or being fetched) and a JDK: else the YARN tests skip. */
export const yarnAvailable = () => (installed() || fetchRunning()) && javaHome() !== undefined;

/** Waits for a background fetch of the jars (scripts/setup-yarn.sh --background). */
export async function waitForYarnJars(timeoutMs = 10 * 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!installed() && fetchRunning() && Date.now() < deadline) await sleep(2000);
  if (!installed()) throw new Error(`no YARN jars in ${yarnJarDir()} (scripts/setup-yarn.sh)`);
}

export interface YarnCluster {
  /** http://127.0.0.1:<port>: the ResourceManager's web address (REST /ws/v1/cluster). */
  rmUrl: string;
  /** 127.0.0.1:<port>: the ResourceManager's client address (yarn.resourcemanager.address). */
  rmAddress: string;
  /** The NodeManager's web address. */
  nmUrl: string;
  /** Hadoop properties a client needs beyond the addresses (the local filesystem as default). */
  clientConf: Record<string, string>;
  /** Folder of the daemons' logs, conf, local and log dirs. */
  dir: string;
  stopRm(): Promise<void>;
  startRm(): Promise<void>;
  stop(): Promise<void>;
}

const xml = (props: Record<string, string>) =>
  '<?xml version="1.0"?>\n<configuration>\n' +
  Object.entries(props)
    .map(([k, v]) => `  <property><name>${k}</name><value>${v}</value></property>`)
    .join('\n') +
  '\n</configuration>\n';

/** --add-opens Hadoop 3.3's daemons need on Java 17 (Guice, the web apps' reflection). */
const OPENS = [
  'java.base/java.lang',
  'java.base/java.util',
  'java.base/java.lang.reflect',
  'java.base/java.io',
  'java.base/java.net',
  'java.base/java.nio',
  'java.base/sun.nio.ch',
  'java.base/java.util.concurrent',
  'java.base/java.util.concurrent.atomic',
].flatMap((p) => ['--add-opens', `${p}=ALL-UNNAMED`]);

async function up(url: string, ok: (body: string) => boolean, proc: ChildProcess, log: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break;
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000), headers: { accept: 'application/json' } });
      if (r.ok && ok(await r.text())) return;
    } catch {
      // not yet
    }
    await sleep(300);
  }
  const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-30).join('\n') : '';
  throw new Error(`YARN daemon not up at ${url}; its log (${log}) ends:\n${tail}`);
}

/** Starts a ResourceManager and a NodeManager on loopback; resolves once the node has registered. */
export async function startYarn(
  opts: { memoryMb?: number; vcores?: number; logAggregation?: boolean } = {},
): Promise<YarnCluster> {
  await waitForYarnJars();
  const jh = javaHome();
  if (!jh) throw new Error('no JDK (JAVA_HOME) for the YARN daemons');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'yarn-'));
  const conf = path.join(dir, 'conf');
  mkdirSync(conf);
  const [rm, sched, tracker, admin, rmWeb, nm, nmWeb, loc] = await Promise.all(
    Array.from({ length: 8 }, () => freePort()),
  );
  const lo = '127.0.0.1';
  // The application masters reach the scheduler at the address of the client's configuration.
  // With log aggregation, ended containers' logs go to the remote log folder on the local filesystem, which the
  // client reads them from (its configuration names the folder).
  const aggregation: Record<string, string> = opts.logAggregation
    ? {
        'yarn.log-aggregation-enable': 'true',
        'yarn.nodemanager.remote-app-log-dir': path.join(dir, 'app-logs'),
      }
    : { 'yarn.log-aggregation-enable': 'false' };
  // How often a client, an application master or the NodeManager tries a ResourceManager that does not answer
  // again (default 30 s: a stopped and restarted ResourceManager would be found up to 30 s late).
  const retry = { 'yarn.resourcemanager.connect.retry-interval.ms': '1000' };
  const clientConf: Record<string, string> = {
    'fs.defaultFS': 'file:///',
    'yarn.resourcemanager.scheduler.address': `${lo}:${sched}`,
    ...retry,
    ...(opts.logAggregation ? aggregation : {}),
  };
  writeFileSync(
    path.join(conf, 'core-site.xml'),
    xml({ 'fs.defaultFS': 'file:///', 'hadoop.tmp.dir': path.join(dir, 'tmp') }),
  );
  writeFileSync(
    path.join(conf, 'yarn-site.xml'),
    xml({
      'yarn.resourcemanager.hostname': lo,
      'yarn.resourcemanager.bind-host': lo,
      'yarn.resourcemanager.address': `${lo}:${rm}`,
      'yarn.resourcemanager.scheduler.address': `${lo}:${sched}`,
      'yarn.resourcemanager.resource-tracker.address': `${lo}:${tracker}`,
      'yarn.resourcemanager.admin.address': `${lo}:${admin}`,
      'yarn.resourcemanager.webapp.address': `${lo}:${rmWeb}`,
      // Work-preserving restart: a ResourceManager stopped and started again knows the applications it had.
      'yarn.resourcemanager.recovery.enabled': 'true',
      'yarn.resourcemanager.store.class':
        'org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore',
      'yarn.resourcemanager.fs.state-store.uri': `file://${path.join(dir, 'rm-state')}`,
      'yarn.nodemanager.hostname': lo,
      'yarn.nodemanager.bind-host': lo,
      'yarn.nodemanager.address': `${lo}:${nm}`,
      'yarn.nodemanager.webapp.address': `${lo}:${nmWeb}`,
      'yarn.nodemanager.localizer.address': `${lo}:${loc}`,
      'yarn.nodemanager.local-dirs': path.join(dir, 'nm-local'),
      'yarn.nodemanager.log-dirs': path.join(dir, 'nm-logs'),
      'yarn.nodemanager.resource.memory-mb': String(opts.memoryMb ?? 6144),
      'yarn.nodemanager.resource.cpu-vcores': String(opts.vcores ?? 8),
      'yarn.nodemanager.vmem-check-enabled': 'false',
      'yarn.nodemanager.pmem-check-enabled': 'false',
      'yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage': '99.9',
      'yarn.nodemanager.container-executor.class': 'org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor',
      'yarn.nodemanager.env-whitelist':
        'JAVA_HOME,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,HADOOP_CONF_DIR,CLASSPATH_PREPEND_DISTCACHE,HADOOP_YARN_HOME,HADOOP_HOME,PATH,LANG,TZ',
      ...aggregation,
      'yarn.scheduler.minimum-allocation-mb': '256',
      'yarn.scheduler.maximum-allocation-mb': String(opts.memoryMb ?? 6144),
      'yarn.resourcemanager.nodemanager-connect-retries': '3',
      'yarn.resourcemanager.nodemanagers.heartbeat-interval-ms': '250',
      'yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms': '1000',
      ...retry,
      'yarn.timeline-service.enabled': 'false',
    }),
  );
  writeFileSync(
    path.join(conf, 'capacity-scheduler.xml'),
    xml({
      'yarn.scheduler.capacity.root.queues': 'default',
      'yarn.scheduler.capacity.root.default.capacity': '100',
      'yarn.scheduler.capacity.root.default.maximum-capacity': '100',
      'yarn.scheduler.capacity.maximum-am-resource-percent': '1.0',
      'yarn.scheduler.capacity.resource-calculator': 'org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator',
    }),
  );
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? dir,
    JAVA_HOME: jh,
    HADOOP_CONF_DIR: conf,
  };
  const cp = `${conf}:${yarnJarDir()}/*`;
  const daemon = (name: string, mainClass: string) => {
    const log = path.join(dir, `${name}.log`);
    const fd = openSync(log, 'a');
    const p = spawn(
      path.join(jh, 'bin', 'java'),
      [
        '-Xmx384m',
        '-XX:TieredStopAtLevel=1',
        '-XX:+UseSerialGC',
        ...OPENS,
        `-Dhadoop.log.dir=${dir}`,
        `-Dyarn.log.dir=${dir}`,
        '-cp',
        cp,
        mainClass,
      ],
      { cwd: dir, env, stdio: ['ignore', fd, fd] },
    );
    closeSync(fd);
    return { p, log };
  };
  const rmUrl = `http://${lo}:${rmWeb}`;
  const nmUrl = `http://${lo}:${nmWeb}`;
  let rmProc = daemon('resourcemanager', 'org.apache.hadoop.yarn.server.resourcemanager.ResourceManager');
  const nmProc = daemon('nodemanager', 'org.apache.hadoop.yarn.server.nodemanager.NodeManager');
  const stopProc = async (p: ChildProcess) => {
    if (p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  };
  const rmReady = async () => {
    await up(`${rmUrl}/ws/v1/cluster/info`, (b) => b.includes('STARTED'), rmProc.p, rmProc.log);
    await up(`${rmUrl}/ws/v1/cluster/nodes`, (b) => b.includes('"RUNNING"'), nmProc.p, nmProc.log);
  };
  try {
    await rmReady();
  } catch (e) {
    await Promise.all([stopProc(nmProc.p), stopProc(rmProc.p)]);
    throw e;
  }
  return {
    rmUrl,
    rmAddress: `${lo}:${rm}`,
    nmUrl,
    clientConf,
    dir,
    stopRm: () => stopProc(rmProc.p),
    startRm: async () => {
      rmProc = daemon('resourcemanager', 'org.apache.hadoop.yarn.server.resourcemanager.ResourceManager');
      await rmReady();
    },
    stop: async () => {
      // The NodeManager first (it kills its containers), then the ResourceManager.
      await stopProc(nmProc.p);
      await stopProc(rmProc.p);
      if (!process.env.KEEP_YARN_DIR) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export { ROOT as YARN_TESTKIT_ROOT };
