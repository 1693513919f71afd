// A local driver's status, derived from the files of its folder on every call (nothing is held in
// memory, so a restarted worker reads the same status).
import path from 'node:path';
import { DriverPhase, type DriverStatus } from '../../../domain/driver';
import { DRIVER_FILES, findAppId, readEndpoint, readIntFile, statOrUndefined } from './driver-files';
import { failureSummary } from './logs';
import { groupAlive } from './process';
import { linkHistory } from './spark-ui';

/** A folder without a pid file older than this is a launch that died between mkdir and spawn. */
const LAUNCH_STALE_MS = 30_000;

/*
 * Phases:
 *
 *   mkdir ──▶ (no pid file) ──▶ pid file, group alive ──▶ exit file
 *             PENDING            RUNNING                   0 → SUCCEEDED, else FAILED(exitCode, message)
 *               │ older than 30 s  │ group gone, no exit file
 *               ▼                  ▼
 *             FAILED (launch      FAILED ("ended without recording an exit code (killed?)")
 *             interrupted)
 *   removed marker, at any point before an exit file ──▶ FAILED ("removed")
 *
 * RUNNING starts when the wrapper process exists, before the JVM is up: Spark gives no dependable
 * signal of having started that works for every application, and the caller needs none. An SQL
 * engine's endpoint is reported while PENDING or RUNNING; whether it answers yet is for the caller to probe.
 */
export async function driverStatus(dir: string, historyDir?: string): Promise<DriverStatus> {
  const dirStat = await statOrUndefined(dir);
  if (!dirStat) return { phase: DriverPhase.MISSING };
  const [pid, removed] = await Promise.all([
    readIntFile(path.join(dir, DRIVER_FILES.pid)),
    statOrUndefined(path.join(dir, DRIVER_FILES.removed)),
  ]);
  let exit = await readIntFile(path.join(dir, DRIVER_FILES.exit));
  const appId = await findAppId(dir);
  // The History Server sees the run from its first events on; a failure to link costs only its history.
  if (appId && historyDir) await linkHistory(dir, appId, historyDir).catch(() => undefined);
  const base: DriverStatus = {
    phase: DriverPhase.PENDING,
    ...(appId && { appId }),
    ...(pid && { startTime: Math.round(pid.mtimeMs) }),
  };
  // Only while it may listen: once it has ended, another process may have the port.
  const withEndpoint = async (s: DriverStatus): Promise<DriverStatus> => {
    const endpoint = await readEndpoint(dir);
    return endpoint ? { ...s, endpoint } : s;
  };

  // A driver that ended on its own before remove() keeps its outcome (the job's logs still say how it ended).
  if (removed && !(exit && exit.mtimeMs <= removed.mtimeMs)) {
    return {
      ...base,
      phase: DriverPhase.FAILED,
      message: 'removed',
      endTime: Math.round(removed.mtimeMs),
      ...(exit && { exitCode: exit.value }),
    };
  }
  if (!exit && pid) {
    if (await groupAlive(pid.value, dir)) return withEndpoint({ ...base, phase: DriverPhase.RUNNING });
    // The wrapper writes the exit file before it ends, so a group seen gone has written it if it ever will.
    exit = await readIntFile(path.join(dir, DRIVER_FILES.exit));
    if (!exit) {
      return {
        ...base,
        phase: DriverPhase.FAILED,
        message: 'driver process ended without recording an exit code (killed?)',
        endTime: Math.round((await statOrUndefined(path.join(dir, DRIVER_FILES.log)))?.mtimeMs ?? Date.now()),
      };
    }
  }
  if (exit) {
    const endTime = Math.round(exit.mtimeMs);
    if (exit.value === 0) return { ...base, phase: DriverPhase.SUCCEEDED, exitCode: 0, endTime };
    const detail = await failureSummary(path.join(dir, DRIVER_FILES.log));
    const message = `driver exited with code ${exit.value}${detail ? `: ${detail}` : ''}`;
    return { ...base, phase: DriverPhase.FAILED, exitCode: exit.value, message, endTime };
  }
  if (Date.now() - dirStat.mtimeMs > LAUNCH_STALE_MS) {
    return { ...base, phase: DriverPhase.FAILED, message: 'launch was interrupted before the driver process started' };
  }
  return withEndpoint(base);
}
