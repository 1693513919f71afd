// The files of a local driver's folder, DRIVER_DIR/<driverId> (see adapter.ts), read and written so
// that concurrent readers never see half a file.
import { randomUUID } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { EngineEndpoint } from '../../../domain/sql-engine';

export const DRIVER_FILES = {
  command: 'command.json',
  pid: 'pid',
  exit: 'exit',
  log: 'driver.log',
  /** Python drivers: the script Spark runs as the driver's Python (adapter.ts). */
  python: 'python',
  removed: 'removed',
  eventLog: 'eventlog',
  appId: 'appid',
  /** SQL engines: JSON {host, port} of where it listens, written before it starts. */
  endpoint: 'endpoint',
  /** JSON {host, port} of the driver's Spark UI, chosen and written before it starts (see ui.ts). */
  ui: 'ui',
} as const;

/** How far into driver.log the application id is looked for (Spark logs it while starting). */
const APP_ID_SCAN_BYTES = 1 << 20;
// Also found inside names like eventlog_v2_local-…, where \b would not match.
const APP_ID = /(?<![A-Za-z0-9])local-\d{10,}/;

export async function findAppId(dir: string): Promise<string | undefined> {
  const cache = path.join(dir, DRIVER_FILES.appId);
  const cached = await fs.readFile(cache, 'utf8').then(
    (s) => s.trim(),
    () => '',
  );
  if (cached) return cached;
  const fromEventLog = (await fs.readdir(path.join(dir, DRIVER_FILES.eventLog)).catch(() => [] as string[]))
    .map((f) => APP_ID.exec(f)?.[0])
    .find(Boolean);
  const appId = fromEventLog ?? (await scanHead(path.join(dir, DRIVER_FILES.log), APP_ID_SCAN_BYTES, APP_ID));
  if (appId) await writeFileAtomic(cache, appId + '\n').catch(() => undefined);
  return appId;
}

/**
 * Opens a file of a driver folder for reading, only if it is a regular file itself: the driver runs in that
 * folder and could replace its log with a link to a file of the service, which the logs endpoint would then
 * serve. Undefined for a missing file, a symbolic link or anything but a regular file.
 */
export async function openOwnFile(file: string): Promise<fs.FileHandle | undefined> {
  const fh = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW).catch(() => undefined);
  if (!fh) return undefined;
  if ((await fh.stat()).isFile()) return fh;
  await fh.close();
  return undefined;
}

async function scanHead(file: string, bytes: number, re: RegExp): Promise<string | undefined> {
  const fh = await openOwnFile(file);
  if (!fh) return undefined;
  try {
    const buf = Buffer.alloc(Math.min(bytes, (await fh.stat()).size));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return re.exec(buf.subarray(0, bytesRead).toString('utf8'))?.[0];
  } finally {
    await fh.close();
  }
}

/** An SQL engine's endpoint file; undefined for other drivers (and for an engine that has not written it). */
export async function readEndpoint(dir: string): Promise<EngineEndpoint | undefined> {
  try {
    const e = JSON.parse(await fs.readFile(path.join(dir, DRIVER_FILES.endpoint), 'utf8')) as Partial<EngineEndpoint>;
    return typeof e.host === 'string' && typeof e.port === 'number' ? { host: e.host, port: e.port } : undefined;
  } catch {
    return undefined;
  }
}

export async function readIntFile(file: string): Promise<{ value: number; mtimeMs: number } | undefined> {
  try {
    const [text, st] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
    const value = Number.parseInt(text.trim(), 10);
    return Number.isFinite(value) ? { value, mtimeMs: st.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

export async function writeFileAtomic(file: string, content: string): Promise<void> {
  const tmp = `${file}.${randomUUID().slice(0, 8)}.tmp`;
  await fs.writeFile(tmp, content);
  await fs.rename(tmp, file);
}

export const statOrUndefined = (p: string) => fs.stat(p).catch(() => undefined);

export const errCode = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code;
