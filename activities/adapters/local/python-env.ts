// Python environments for pyRequirements: one venv per (interpreter, sorted requirement list), built
// once under STACK_DIR/pyenvs and shared by every driver (and worker process) on this host.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InvalidSpecError } from '../../../domain/driver';
import type { Config } from '../../../lib/config';
import { childEnv } from './child-env';
import { errCode, statOrUndefined } from './driver-files';
import { pidAlive, sleep } from './process';

const PIP_TIMEOUT_MS = 20 * 60_000;

/** Builds in progress in this process, by folder: concurrent launches share one build. */
const pyEnvBuilds = new Map<string, Promise<void>>();

/**
 * The interpreter for a driver with these requirements: config.PYTHON when there are none, else
 * the python of a venv under STACK_DIR/pyenvs/<hash>, built once per (interpreter, sorted list).
 * The venv sees config.PYTHON's own packages (pyspark, temporalio, ilum-job-api) through a .pth file,
 * since --system-site-packages alone reaches only the base interpreter's when PYTHON is itself a venv;
 * that also lets it use PYTHON's pip instead of bootstrapping its own.
 */
export async function pythonFor(config: Pick<Config, 'PYTHON' | 'STACK_DIR'>, requirements: string[]): Promise<string> {
  const list = [...new Set(requirements.map((r) => r.trim()).filter(Boolean))].sort();
  if (list.length === 0) return config.PYTHON;
  const option = list.find((r) => r.startsWith('-'));
  // An entry like --index-url would reconfigure pip rather than name a package.
  if (option) throw new InvalidSpecError(`pyRequirements entry ${option} is a pip option, not a requirement`);
  const hash = createHash('sha256')
    .update(JSON.stringify({ python: config.PYTHON, requirements: list }))
    .digest('hex')
    .slice(0, 16);
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
      if (
        await fs.rename(lock, trash).then(
          () => true,
          () => false,
        )
      )
        await fs.rm(trash, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for another process to build the Python environment ${envDir}`);
    await sleep(500);
  }
  try {
    await fs.writeFile(path.join(lock, 'owner'), JSON.stringify({ host: os.hostname(), pid: process.pid }));
    if (existsSync(ready)) return;
    await fs.rm(envDir, { recursive: true, force: true });
    const venv = await run(basePython, ['-m', 'venv', '--system-site-packages', '--without-pip', envDir], 60_000);
    if (venv.code !== 0)
      throw new Error(`creating the Python environment failed (exit ${venv.code}): ${lastLines(venv.output, 10)}`);
    const envPython = path.join(envDir, 'bin', 'python');
    const sitesOf = async (py: string): Promise<string[]> => {
      const r = await run(py, ['-c', 'import json, site; print(json.dumps(site.getsitepackages()))'], 30_000);
      if (r.code !== 0) throw new Error(`${py} cannot list its site-packages: ${lastLines(r.output, 5)}`);
      return JSON.parse(r.output.trim().split('\n').pop() ?? '[]') as string[];
    };
    const [parentSites, ownSites] = await Promise.all([sitesOf(basePython), sitesOf(envPython)]);
    const inherited = parentSites.filter((p) => !ownSites.includes(p));
    await fs.writeFile(path.join(ownSites[0], '_spark_orchestrator_parent.pth'), inherited.join('\n') + '\n');
    const pip = await run(
      envPython,
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...requirements],
      PIP_TIMEOUT_MS,
    );
    if (pip.code !== 0) {
      await fs.rm(envDir, { recursive: true, force: true });
      throw new InvalidSpecError(
        `pip install ${requirements.join(' ')} failed (exit ${pip.code ?? 'timeout'}):\n${lastLines(pip.output, 15)}`,
      );
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
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      // pip runs a requirement's build code: it gets the pip settings and basics, not the service's secrets.
      env: childEnv('pip', { PIP_DISABLE_PIP_VERSION_CHECK: '1' }),
    });
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
