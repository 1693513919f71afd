// Files a Livy request names (batch `file`, `jars`, `pyFiles`, `files`): as in Livy, local paths are
// allowed only inside configured folders (LIVY_LOCAL_DIRS, Livy's livy.file.local-dir-whitelist). Each is
// copied to a temporary upload, so the main API's services store it like a multipart upload.
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../lib/config';
import { badRequest } from '../errors';
import type { Files, UploadedFile } from '../routing';

/** The local path of `file:`, `local:` or plain absolute references; anything else is refused. */
function localPathOf(field: string, ref: string): string {
  if (ref.startsWith('file:')) {
    try {
      return fileURLToPath(ref.startsWith('file://') ? ref : `file://${ref.slice('file:'.length)}`);
    } catch {
      throw badRequest(`${field}: '${ref}' is not a file URL`);
    }
  }
  if (ref.startsWith('local:')) return ref.slice('local:'.length);
  if (path.isAbsolute(ref)) return ref;
  throw badRequest(
    `${field}: '${ref}' is not a local path; this server reads files from LIVY_LOCAL_DIRS only (absolute paths, file: or local:)`,
  );
}

const allowedDirs = (config: Pick<Config, 'LIVY_LOCAL_DIRS'>) =>
  config.LIVY_LOCAL_DIRS.split(',')
    .map((d) => d.trim())
    .filter(Boolean);

/** One answer for every refused path, so that a caller cannot learn which paths exist, are files or are readable. */
const refused = (field: string, ref: string) =>
  badRequest(`${field}: '${ref}' is not a readable file inside LIVY_LOCAL_DIRS`);

/** The real path of a reference, checked to lie inside an allowed folder and to be a readable file. */
export async function checkedLocalFile(config: Pick<Config, 'LIVY_LOCAL_DIRS'>, field: string, ref: string) {
  const p = localPathOf(field, ref);
  const dirs = allowedDirs(config);
  if (!dirs.length) throw badRequest(`${field}: local files are not allowed (LIVY_LOCAL_DIRS is empty)`);
  const real = await realpath(p).catch(() => undefined);
  if (!real) throw refused(field, ref);
  let inside = false;
  for (const d of dirs) {
    const root = await realpath(d).catch(() => undefined);
    if (root && real.startsWith(root.endsWith(path.sep) ? root : root + path.sep)) inside = true;
  }
  const readable =
    inside &&
    (await stat(real).then(
      (s) => s.isFile(),
      () => false,
    )) &&
    (await access(real, constants.R_OK).then(
      () => true,
      () => false,
    ));
  if (!readable) throw refused(field, ref);
  return real;
}

/** Copies the named files to temporary uploads, by upload field (jars, pyFiles, files). */
export async function stageFiles(
  config: Pick<Config, 'LIVY_LOCAL_DIRS' | 'STACK_DIR'>,
  refs: Record<string, string[]>,
): Promise<Files> {
  const dir = path.join(config.STACK_DIR, 'uploads');
  await mkdir(dir, { recursive: true });
  // Every reference is checked before anything is copied, so a refused request leaves nothing behind.
  const checked: [string, string, string][] = [];
  for (const [field, list] of Object.entries(refs))
    for (const ref of list) checked.push([field, ref, await checkedLocalFile(config, field, ref)]);
  const out: Files = {};
  const copies: string[] = [];
  for (const [field, ref, real] of checked) {
    const filepath = path.join(dir, `livy-${randomUUID()}`);
    try {
      await copyFile(real, filepath);
      copies.push(filepath);
      const file: UploadedFile = { filepath, originalFilename: path.basename(real), size: (await stat(real)).size };
      (out[field] ??= []).push(file);
    } catch {
      // Gone or unreadable since the check: the same answer as a refused path, and no copy left behind.
      await Promise.all(copies.map((c) => rm(c, { force: true })));
      throw refused(field, ref);
    }
  }
  return out;
}
