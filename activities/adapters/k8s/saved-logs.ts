// Logs of a k8s driver kept after its pods are gone: remove saves each pod's log (bounded as pod-logs.ts
// reads it) into <logDir>/<name base>/ before it deletes the pods, and logs reads them from there once
// the driver pod no longer exists. A later remove (the job's deletion) finds no pod and keeps what was
// saved; removeSavedLogs deletes it (retention).
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { k8sNames } from './names';

export interface SavedPodLog {
  name: string;
  role: 'driver' | 'executor';
  /** The pod's phase when it was saved. */
  state: string;
  lines: string[];
}

const INDEX = 'pods.json';
const folderOf = (logDir: string, driverId: string) => path.join(logDir, k8sNames(driverId).base);

/** Saves the pods' logs, replacing an earlier save of the driver. */
export async function saveLogs(logDir: string, driverId: string, pods: SavedPodLog[]): Promise<void> {
  const dir = folderOf(logDir, driverId);
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  await mkdir(tmp, { recursive: true });
  const index = pods.map(({ name, role, state }) => ({ name, role, state, file: `${name}.log` }));
  await Promise.all(
    pods.map((p) => writeFile(path.join(tmp, `${p.name}.log`), p.lines.length ? `${p.lines.join('\n')}\n` : '')),
  );
  await writeFile(path.join(tmp, INDEX), JSON.stringify(index));
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
}

/** What was saved for the driver, driver first; nothing when nothing was. */
export async function readSavedLogs(logDir: string, driverId: string): Promise<SavedPodLog[]> {
  const dir = folderOf(logDir, driverId);
  let index: { name: string; role: 'driver' | 'executor'; state: string; file: string }[];
  try {
    index = JSON.parse(await readFile(path.join(dir, INDEX), 'utf8')) as typeof index;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return Promise.all(
    index.map(async ({ name, role, state, file }) => {
      const text = await readFile(path.join(dir, path.basename(file)), 'utf8').catch(() => '');
      return { name, role, state, lines: text ? text.replace(/\n$/, '').split('\n') : [] };
    }),
  );
}

export async function removeSavedLogs(logDir: string, driverId: string): Promise<void> {
  await rm(folderOf(logDir, driverId), { recursive: true, force: true });
}
