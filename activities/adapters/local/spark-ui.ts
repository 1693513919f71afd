// A local driver's Spark UI and its event log's place in the History Server's folder.
//   ui                      DRIVER_FILES.ui: {host, port, mac} of the UI, chosen by launch and written before
//                           the driver starts, so the API (another process on this host) reaches it with no
//                           help from the driver and no port scan. The folder is the driver's working
//                           directory, so the job can rewrite the file: the mac (HMAC of the driver id and
//                           port under a key derived from SECRET_KEY, which no driver is given) makes a
//                           rewritten file worthless, else a job could point its proxy at any loopback port
//                           (Temporal, MongoDB, the API, another service's UI)
//   SPARK_HISTORY_DIR/      one symbolic link per finished or running application, named as Spark names
//                           its event log (eventlog_v2_<appId>, or <appId> for a single-file log), to the
//                           log in the driver's folder: the History Server reads one folder, the logs stay
//                           where retention removes them with their driver
import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DRIVER_FILES } from './driver-files';

export interface UiAddress {
  host: string;
  port: number;
}

/** The only host a local driver's UI may be reached at: whatever the file says, nothing else is proxied. */
export const UI_HOST = '127.0.0.1';

/** Ports below this are no driver's (free ports come from the ephemeral range). */
const MIN_UI_PORT = 1024;

/**
 * The seal of driver `driverId`'s UI on `port`: only the worker (which launched it) and the API hold
 * SECRET_KEY; the key is derived for this use alone (a runner's direct-channel secret is another HMAC).
 */
export function uiMac(secretKey: string, driverId: string, port: number): string {
  const key = createHmac('sha256', Buffer.from(secretKey, 'hex')).update('spark-ui-port v1').digest();
  return createHmac('sha256', key).update(`${driverId}\n${port}`).digest('base64url');
}

/** The file's content for driver `driverId`'s UI on this port; unsealed (so never proxied) without a key. */
export const uiFile = (port: number, driverId: string, secretKey: string | undefined): string =>
  `${JSON.stringify({ host: UI_HOST, port, ...(secretKey && { mac: uiMac(secretKey, driverId, port) }) })}\n`;

/**
 * Where driver `driverId` (folder `dir`) serves its UI; undefined when it has none (launched before UIs were
 * recorded, an SQL engine of another kind) or the file is not what launch wrote: another host, a port out of
 * range, no seal or a seal of another driver or port (a file the job rewrote, or copied from another driver).
 */
export async function readUiAddress(dir: string, driverId: string, secretKey: string): Promise<UiAddress | undefined> {
  try {
    const st = await fs.lstat(path.join(dir, DRIVER_FILES.ui));
    if (!st.isFile() || st.size > 4096) return undefined;
    const u = JSON.parse(await fs.readFile(path.join(dir, DRIVER_FILES.ui), 'utf8')) as Partial<UiAddress> & {
      mac?: unknown;
    };
    if (u.host !== UI_HOST || !Number.isInteger(u.port) || u.port! < MIN_UI_PORT || u.port! > 65535) return undefined;
    if (typeof u.mac !== 'string') return undefined;
    const want = Buffer.from(uiMac(secretKey, driverId, u.port!));
    const got = Buffer.from(u.mac);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
    return { host: UI_HOST, port: u.port! };
  } catch {
    return undefined;
  }
}

/** An application id as Spark makes them (local-…, app-…): one plain file name. */
const APP_ID_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** Names Spark gives an application's event log in eventlog/: a rolling folder, or a single finished file. */
const logNames = (appId: string) => [`eventlog_v2_${appId}`, appId];

/**
 * Links the driver's event log of `appId` into the History Server's folder, once; removes links there whose
 * log is gone (retention removed the driver folder) while at it. Only a real folder or file of the driver's
 * own eventlog/ is linked, never a link the driver put there.
 */
export async function linkHistory(dir: string, appId: string, historyDir: string): Promise<void> {
  // The id comes from the driver's folder (appid, eventlog/, driver.log), which the job writes: as a file
  // name it must be one name, or `x/../../..` would put a link anywhere the worker may write.
  if (!APP_ID_NAME.test(appId)) return;
  for (const name of logNames(appId)) {
    if (await fs.lstat(path.join(historyDir, name)).catch(() => undefined)) return;
  }
  for (const name of logNames(appId)) {
    const target = path.resolve(dir, DRIVER_FILES.eventLog, name);
    const st = await fs.lstat(target).catch(() => undefined);
    if (!st || !(st.isDirectory() || st.isFile())) continue;
    await fs.mkdir(historyDir, { recursive: true });
    await pruneHistory(historyDir);
    await fs.symlink(target, path.join(historyDir, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    return;
  }
}

async function pruneHistory(historyDir: string): Promise<void> {
  for (const name of await fs.readdir(historyDir).catch(() => [] as string[])) {
    const link = path.join(historyDir, name);
    if ((await fs.lstat(link)).isSymbolicLink() && !(await fs.stat(link).catch(() => undefined)))
      await fs.rm(link, { force: true });
  }
}
