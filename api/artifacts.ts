// The artifact store: uploaded jars, files and pyFiles, kept under ARTIFACT_DIR/<ownerId>/<kind>/ where
// every driver of that job, group or schedule reads them (k8s clusters read the same paths from storage).
import { mkdir, rename, copyFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Artifacts } from '../domain/types';
import { conflict } from './errors';
import type { Files } from './routing';

const KINDS = ['jars', 'files', 'pyFiles'] as const;

const safeName = (name: string) => {
  const base = path.basename(name || '').replace(/[^A-Za-z0-9._-]/g, '_');
  if (!base || base === '.' || base === '..') throw conflict(`file name '${name}' is not usable`);
  return base;
};

/** Checks names before anything is written, so a refused request leaves nothing behind. */
export function checkUploads(files: Files): void {
  for (const kind of KINDS) {
    const seen = new Set<string>();
    for (const f of files[kind] ?? []) {
      const n = safeName(f.originalFilename);
      if (seen.has(n)) throw conflict(`${kind}: two files are named '${n}'`);
      seen.add(n);
      if (kind === 'jars' && !n.endsWith('.jar')) throw conflict(`jars: '${n}' is not a .jar file`);
      if (kind === 'pyFiles' && !/\.(py|zip|egg)$/.test(n))
        throw conflict(`pyFiles: '${n}' is not a .py, .zip or .egg file`);
    }
  }
}

export async function storeUploads(
  artifactDir: string,
  ownerId: string,
  files: Files,
  base?: Artifacts,
): Promise<Artifacts> {
  const out: Artifacts = {
    jars: [...(base?.jars ?? [])],
    files: [...(base?.files ?? [])],
    pyFiles: [...(base?.pyFiles ?? [])],
  };
  for (const kind of KINDS) {
    const list = files[kind] ?? [];
    if (!list.length) continue;
    const dir = path.join(artifactDir, ownerId, kind);
    await mkdir(dir, { recursive: true });
    for (const f of list) {
      const dest = path.join(dir, safeName(f.originalFilename));
      await rename(f.filepath, dest).catch(async () => {
        await copyFile(f.filepath, dest);
        await rm(f.filepath, { force: true });
      });
      out[kind] = [...out[kind].filter((p) => path.basename(p) !== path.basename(dest)), dest];
    }
  }
  return out;
}

/** Removes temporary uploads of a refused request. */
export async function discardUploads(files: Files): Promise<void> {
  await Promise.all(
    Object.values(files)
      .flat()
      .map((f) => rm(f.filepath, { force: true })),
  );
}
