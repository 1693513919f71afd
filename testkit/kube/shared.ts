// One real control plane per vitest run, started by the first test file that asks for it (files that need
// no Kubernetes never pay for it) and shared by every file after it: files run in separate worker
// processes, so the first one takes a lock folder, starts the processes detached and writes their
// addresses to <testDir>/kube/info.json; the others wait for that file. test/global-setup.ts stops the
// processes at the end of the run (stopSharedControlPlane).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sleep } from '../wait';
import { startControlPlane, stopPids, type ControlPlaneInfo } from './control-plane';

/**
 * How long a k8s file's beforeAll may take: npm test's setup builds the binaries in the background
 * (scripts/setup-k8s.sh), and the first file that needs them waits for the build when it is still running.
 */
export const K8S_SETUP_TIMEOUT_MS = 25 * 60_000;

const folder = (testDir: string) => path.join(testDir, 'kube');
const infoFile = (testDir: string) => path.join(folder(testDir), 'info.json');
const errorFile = (testDir: string) => path.join(folder(testDir), 'error.txt');

export async function sharedControlPlane(testDir: string, timeoutMs = K8S_SETUP_TIMEOUT_MS): Promise<ControlPlaneInfo> {
  const dir = folder(testDir);
  mkdirSync(testDir, { recursive: true });
  let mine = false;
  try {
    mkdirSync(dir); // the lock: whoever makes the folder starts the control plane
    mine = true;
  } catch {
    // another file is starting it, or has
  }
  if (mine) {
    try {
      const { stop: _stop, ...info } = await startControlPlane(dir);
      writeFileSync(`${infoFile(testDir)}.tmp`, JSON.stringify(info));
      renameSync(`${infoFile(testDir)}.tmp`, infoFile(testDir));
      return info;
    } catch (e) {
      writeFileSync(errorFile(testDir), String((e as Error).message));
      throw e;
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (existsSync(infoFile(testDir))) return JSON.parse(readFileSync(infoFile(testDir), 'utf8')) as ControlPlaneInfo;
    if (existsSync(errorFile(testDir))) throw new Error(readFileSync(errorFile(testDir), 'utf8'));
    if (Date.now() > deadline)
      throw new Error(`the shared Kubernetes control plane did not start within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** Stops the run's control plane, if a file started one. */
export async function stopSharedControlPlane(testDir: string): Promise<void> {
  const f = infoFile(testDir);
  if (!existsSync(f)) return;
  const info = JSON.parse(readFileSync(f, 'utf8')) as ControlPlaneInfo;
  await stopPids(info.pids);
  rmSync(f, { force: true });
}
