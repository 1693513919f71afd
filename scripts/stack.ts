// The whole service on one machine: Temporal dev server (UI on 8233), mongo-java-server, the worker and
// the API, each a child process; the worker and the API run the compiled JavaScript of `npm run build`.
// `up` runs in the foreground; Ctrl-C or `down` stops everything it started.
// Ports and folders: TEMPORAL_PORT, TEMPORAL_UI_PORT, MONGO_PORT, API_PORT, STACK_DIR (see README).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../lib/config';
import { killDrivers, serviceCommand, startServices, stopProc, waitForPort } from './services';

const env = process.env;
const stackDir = env.STACK_DIR ?? path.join(ROOT, '.stack');
const dataDir = env.STACK_DATA_DIR ?? path.join(stackDir, 'data');
const logDir = path.join(stackDir, 'logs');
const pidFile = path.join(stackDir, 'stack.pid');
const ports = {
  temporal: Number(env.TEMPORAL_PORT ?? 7233),
  temporalUi: Number(env.TEMPORAL_UI_PORT ?? 8233),
  mongo: Number(env.MONGO_PORT ?? 27017),
  api: Number(env.API_PORT ?? 9888),
};

async function up() {
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8'));
    if (isAlive(pid)) throw new Error(`the stack is already running (pid ${pid}); stop it with: npm run stop`);
  }
  // Before anything starts: a missing build stops here with its message.
  const commands = { worker: serviceCommand('worker', 'dist'), api: serviceCommand('api', 'dist') };
  mkdirSync(logDir, { recursive: true });
  writeFileSync(pidFile, String(process.pid));
  console.log(
    `starting Temporal (:${ports.temporal}, UI :${ports.temporalUi}) and MongoDB-protocol server (:${ports.mongo}); data in ${dataDir}`,
  );
  const services = await startServices({
    stackDir,
    dataDir,
    logDir,
    temporalPort: ports.temporal,
    temporalUiPort: ports.temporalUi,
    mongoPort: ports.mongo,
    persistent: true,
  });
  const childEnv = {
    ...env,
    STACK_DIR: stackDir,
    TEMPORAL_ADDRESS: services.temporalAddress,
    MONGO_URL: services.mongoUrl,
    API_PORT: String(ports.api),
  };
  const run = (name: keyof typeof commands): ChildProcess => {
    const out = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
    const p = spawn(commands[name].cmd, commands[name].args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout?.pipe(out);
    p.stderr?.pipe(out);
    p.stderr?.on('data', (d: Buffer) => process.stderr.write(`[${name}] ${d}`));
    p.on('exit', (code, sig) => {
      if (!stopping) {
        console.error(`${name} exited (${code ?? sig}); see ${path.join(logDir, `${name}.log`)}. Stopping the stack.`);
        void stop(1);
      }
    });
    return p;
  };
  const worker = run('worker');
  const api = run('api');
  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    console.log('stopping the stack ...');
    await Promise.all([stopProc(api), stopProc(worker)]);
    // Drivers outlive a worker restart by design; stopping the whole stack stops them too. On the next
    // start, groups replace their instances and jobs retry as their maxRetries allow.
    const drivers = await killDrivers(env.DRIVER_DIR ?? path.join(stackDir, 'drivers'));
    if (drivers) console.log(`stopped ${drivers} Spark drivers`);
    await services.stop();
    rmSync(pidFile, { force: true });
    process.exit(code);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  await waitForPort(ports.api, 120_000, api, 'api');
  console.log(`
  API        http://localhost:${ports.api}/api/v1   (OpenAPI: /api/v1/openapi.json, health: /api/v1/health)
  Streams    SSE /api/v1/job/updates, /api/v1/group/job/result/updates; Socket.IO /jobs, /group-job-results
  Temporal   127.0.0.1:${ports.temporal}             UI: http://localhost:${ports.temporalUi}
  MongoDB    ${services.mongoUrl}
  Logs       ${logDir}
  Stop with Ctrl-C or: npm run stop`);
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
