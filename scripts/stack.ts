// The whole service on one machine: Temporal dev server (UI on 8233), mongo-java-server, the worker and
// the API, each a child process kept running by scripts/supervise.ts: one that crashes is restarted with
// backoff and a log line while the others keep running, and Spark drivers (detached, see
// activities/adapters/local/process.ts) never stop because another process crashed.
// `up` runs in the foreground; Ctrl-C or `down` stops everything it started, the drivers included.
// Ports and folders: TEMPORAL_PORT, TEMPORAL_UI_PORT, MONGO_PORT, API_PORT, STACK_DIR (see README);
// STACK_RUN_DIR (default STACK_DIR) holds data, logs, the pid files of the stack and of each process
// (pids/<name>); STACK_RUNNER=tsx runs the worker and API from the sources instead of dist/ (tests, chaos).
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, ROOT } from '../lib/config';
import { uiFilterClasses } from '../activities/adapters/local/ui-filter';
import { historyServerCommand } from './history-server';
import {
  killDrivers,
  localMongoUrl,
  serverCommands,
  serviceCommand,
  startLogged,
  waitForMongo,
  waitForPort,
  type Command,
} from './services';
import { supervise, type Supervised } from './supervise';

const env = process.env;
const stackDir = env.STACK_DIR ?? path.join(ROOT, '.stack');
const runDir = env.STACK_RUN_DIR ?? stackDir;
const dataDir = env.STACK_DATA_DIR ?? path.join(runDir, 'data');
const logDir = path.join(runDir, 'logs');
const pidDir = path.join(runDir, 'pids');
const pidFile = path.join(runDir, 'stack.pid');
const ports = {
  temporal: Number(env.TEMPORAL_PORT ?? 7233),
  temporalUi: Number(env.TEMPORAL_UI_PORT ?? 8233),
  mongo: Number(env.MONGO_PORT ?? 27017),
  api: Number(env.API_PORT ?? 9888),
};

const say = (line: string) => console.log(`${new Date().toISOString()} [stack] ${line}`);

async function up() {
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8'));
    if (isAlive(pid)) throw new Error(`the stack is already running (pid ${pid}); stop it with: npm run stop`);
  }
  // Before anything starts: a missing build or install stops here with its message.
  const runner = env.STACK_RUNNER === 'tsx' ? 'tsx' : 'dist';
  const servers = serverCommands({
    stackDir,
    dataDir,
    logDir,
    temporalPort: ports.temporal,
    temporalUiPort: ports.temporalUi,
    mongoPort: ports.mongo,
    persistent: true,
    headless: env.STACK_HEADLESS === '1',
  });
  const commands = { worker: serviceCommand('worker', runner), api: serviceCommand('api', runner) };
  // Spark's History Server over the drivers' event logs, on loopback (SPARK_HISTORY_URL's port).
  const config = loadConfig({ ...env, STACK_DIR: stackDir });
  const filterClasses = await uiFilterClasses(config.SPARK_HOME, config.STACK_DIR);
  const history = historyServerCommand({ config, runDir, filterClasses }, env);
  mkdirSync(pidDir, { recursive: true });
  writeFileSync(pidFile, String(process.pid));
  const mongoUrl = localMongoUrl(ports.mongo);
  const childEnv = {
    ...env,
    STACK_DIR: stackDir,
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
    MONGO_URL: mongoUrl,
    API_PORT: String(ports.api),
    // The dev stack listens on loopback only, unless told otherwise.
    API_HOST: env.API_HOST ?? '127.0.0.1',
    // The worker's Prometheus metrics (docs/deploy.md#metrics); empty turns them off.
    WORKER_METRICS_ADDRESS: env.WORKER_METRICS_ADDRESS ?? '127.0.0.1:9464',
  };

  const keep = (name: string, c: Command, spawnIt: (c: Command) => ReturnType<typeof startLogged>) =>
    supervise({
      name,
      spawn: () => spawnIt(c),
      onStart: (p) => writeFileSync(path.join(pidDir, name), String(p.pid ?? '')),
      log: say,
    });
  // Each in its own process group (detached): Ctrl-C reaches only this process, which stops them in order.
  const server = (c: Command, name: string) => startLogged(c.cmd, c.args, path.join(logDir, `${name}.log`), true);
  const service = (name: string) => (c: Command) => {
    const out = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
    const p = spawn(c.cmd, c.args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    p.stdout?.pipe(out);
    p.stderr?.pipe(out);
    p.stderr?.on('data', (d: Buffer) => process.stderr.write(`[${name}] ${d}`));
    return p;
  };

  say(
    `starting Temporal (:${ports.temporal}, UI :${ports.temporalUi}) and MongoDB-protocol server (:${ports.mongo}); data in ${dataDir}`,
  );
  const procs: Supervised[] = [
    keep('temporal', servers.temporal, (c) => server(c, 'temporal')),
    keep('mongo', servers.mongo, (c) => server(c, 'mongo')),
  ];
  const historyServer = keep('spark-history', history, (c) => {
    const out = createWriteStream(path.join(logDir, 'spark-history.log'), { flags: 'a' });
    const p = spawn(c.cmd, c.args, {
      // Only its allow-listed environment: it replays logs the jobs wrote (history-server.ts).
      env: history.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    p.stdout?.pipe(out);
    p.stderr?.pipe(out);
    return p;
  });
  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    say('stopping the stack ...');
    // API and worker first, then the drivers (a crash never stops them; stopping the stack does), then the servers.
    const [temporal, mongo, ...services] = procs;
    await Promise.all([...services, historyServer].map((p) => p.stop()));
    const drivers = await killDrivers(env.DRIVER_DIR ?? path.join(stackDir, 'drivers'));
    if (drivers) say(`stopped ${drivers} Spark drivers`);
    await Promise.all([temporal, mongo].map((p) => p.stop()));
    rmSync(pidDir, { recursive: true, force: true });
    rmSync(pidFile, { force: true });
    process.exit(code);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  try {
    await Promise.all([
      waitForPort(ports.temporal, 120_000, undefined, 'temporal dev server'),
      waitForPort(ports.mongo, 120_000, undefined, 'mongo-java-server').then(() => waitForMongo(mongoUrl, 120_000)),
    ]);
    if (stopping) return;
    procs.push(keep('worker', commands.worker, service('worker')), keep('api', commands.api, service('api')));
    await waitForPort(ports.api, 120_000, undefined, 'api');
  } catch (e) {
    // The children are in process groups of their own: nothing stops them but this.
    say(`${(e as Error).message}; see ${logDir}`);
    return stop(1);
  }
  console.log(`
  API        http://localhost:${ports.api}/api/v1   (OpenAPI: /api/v1/openapi.json, health: /api/v1/health)
  Streams    SSE /api/v1/job/updates, /api/v1/group/job/result/updates; Socket.IO /jobs, /group-job-results
  Temporal   127.0.0.1:${ports.temporal}             UI: http://localhost:${ports.temporalUi}
  Spark UIs  /api/v1/job/<jobId>/ui (running), /api/v1/job/<jobId>/history (History Server, loopback)
  MongoDB    ${mongoUrl}
  Logs       ${logDir}
  A crashed process is restarted (1 s doubling to 30 s); stop with Ctrl-C or: npm run stop`);
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function down() {
  if (!existsSync(pidFile)) return console.log('the stack is not running');
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (!isAlive(pid)) {
    rmSync(pidFile, { force: true });
    return console.log('the stack is not running (stale pid file removed)');
  }
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 300 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  console.log(isAlive(pid) ? `stack (pid ${pid}) still stopping` : 'stack stopped');
}

const cmd = process.argv[2];
(cmd === 'up' ? up() : cmd === 'down' ? down() : Promise.reject(new Error('usage: stack.ts up|down'))).catch((e) => {
  console.error(String(e instanceof Error ? e.message : e));
  process.exit(1);
});
