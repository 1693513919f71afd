// The retention sweep: what ended more than RETENTION_DAYS ago is removed, so a long-running service keeps
// a bounded footprint. Removed: finished job records (FINISHED, FAILED, CANCELED) and their uploaded
// artifacts, finished executions (job instance results), and local driver folders whose process has
// ended (each folder holds the driver's log and its Spark event log), and the logs k8s drivers left when their
// pods were deleted (STACK_DIR/k8s-logs/<driverId>, saved by the k8s adapter), what other types' ended drivers
// left on the host (their definition's `sweep`: YARN drivers' folders once removed), query-history records of
// statements that ended (or, never ended by a crashed API, began) before the cutoff, and the Livy API's records
// of the batches and statements whose job or execution went, Spark Connect sessions that ended, and k8s drivers'
// event logs copied into SPARK_HISTORY_DIR. Never touched: anything still running, groups,
// schedules and their artifacts, saved SQL statements and notebooks (documents users keep), Livy sessions
// (one per group). The MongoDB-protocol dev server bounds its own oplog (scripts/mongo/Launcher.java). Audit records older than AUDIT_RETENTION_DAYS (their own
// setting: an audit trail is usually kept longer than finished work) go too. Run hourly by a Temporal
// Schedule the worker process creates (ensureRetentionSchedule, workflows/retention.ts); each run is
// idempotent.
import { type Client, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Document } from 'mongodb';
import fs from 'node:fs/promises';
import path from 'node:path';
import { CLUSTER_TYPES, TERMINAL_JOB_STATES } from '../domain/states';
import type { Config } from '../lib/config';
import { Collections, type Store } from '../lib/mongo';
import { DRIVER_FILES, readIntFile } from './adapters/local/driver-files';
import { groupAlive } from './adapters/local/process';
import { CLUSTER_TYPE_DEFS } from './adapters/cluster-types';

export type RetentionConfig = Pick<
  Config,
  'RETENTION_DAYS' | 'AUDIT_RETENTION_DAYS' | 'DRIVER_DIR' | 'ARTIFACT_DIR' | 'STACK_DIR'
> &
  Partial<Pick<Config, 'SPARK_HISTORY_DIR'>>;

export interface RetentionSummary {
  /** Epoch ms: what ended before it was removed. */
  cutoff: number;
  jobs: number;
  results: number;
  driverFolders: number;
  artifactFolders: number;
  /** Logs of k8s drivers saved when their pods were removed. */
  savedLogFolders: number;
  /** Event logs of k8s drivers copied into SPARK_HISTORY_DIR when their pods were removed. */
  historyLogs: number;
  /** Query-history records (GET /sql/history). */
  sqlHistory: number;
  /** Spark Connect sessions that ended (their start and end stay in the audit trail). */
  connectSessions: number;
  /** Livy API records of removed batches (jobs) and statements (executions). */
  livyRecords: number;
  /** Epoch ms: audit records from before it were removed. */
  auditCutoff: number;
  auditRecords: number;
}

const DAY_MS = 86_400_000;
/** Job records removed per batch (each batch one find and one delete). */
const BATCH = 500;
/** A name that can only be a folder right under its parent. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function createRetentionActivities(config: RetentionConfig, store: Store) {
  return {
    /** One sweep; `now` for tests. */
    retentionSweep: (now?: number): Promise<RetentionSummary> => sweep(config, store, now ?? Date.now()),
  };
}

export async function sweep(config: RetentionConfig, store: Store, now: number): Promise<RetentionSummary> {
  const cutoff = now - config.RETENTION_DAYS * DAY_MS;
  const summary: RetentionSummary = {
    cutoff,
    jobs: 0,
    results: 0,
    driverFolders: 0,
    artifactFolders: 0,
    savedLogFolders: 0,
    historyLogs: 0,
    sqlHistory: 0,
    connectSessions: 0,
    livyRecords: 0,
    auditCutoff: now - config.AUDIT_RETENTION_DAYS * DAY_MS,
    auditRecords: 0,
  };
  const jobs = store.col(Collections.jobs);
  const livy = store.col(Collections.livy);
  const old = { state: { $in: [...TERMINAL_JOB_STATES] }, endTime: { $lt: cutoff } };
  for (;;) {
    const ids = (
      await jobs
        .find(old, { projection: { _id: 1 } })
        .limit(BATCH)
        .toArray()
    ).map((d) => String(d._id));
    if (!ids.length) break;
    summary.jobs += (await jobs.deleteMany({ _id: { $in: ids } } as Document)).deletedCount;
    summary.livyRecords += (await livy.deleteMany({ type: 'batch', jobId: { $in: ids } })).deletedCount;
    // A single job's uploads are ARTIFACT_DIR/<jobId> (a group's or schedule's runs have none of their own).
    for (const id of ids) if (await removeFolder(config.ARTIFACT_DIR, id)) summary.artifactFolders++;
    if (ids.length < BATCH) break;
  }
  const results = store.col(Collections.results);
  for (;;) {
    const old = await results
      .find({ endTime: { $lt: cutoff } }, { projection: { _id: 1, jobInstanceId: 1 } })
      .limit(BATCH)
      .toArray();
    if (!old.length) break;
    summary.results += (await results.deleteMany({ _id: { $in: old.map((d) => d._id) } })).deletedCount;
    const executions = old.map((d) => String(d.jobInstanceId));
    summary.livyRecords += (
      await livy.deleteMany({ type: 'statement', jobInstanceId: { $in: executions } })
    ).deletedCount;
    if (old.length < BATCH) break;
  }
  summary.sqlHistory = (
    await store.col(Collections.sqlHistory).deleteMany({
      $or: [{ completionTime: { $lt: cutoff } }, { completionTime: { $exists: false }, creationTime: { $lt: cutoff } }],
    })
  ).deletedCount;
  summary.connectSessions = (
    await store.col(Collections.connectSessions).deleteMany({ state: 'ENDED', endTime: { $lt: cutoff } })
  ).deletedCount;
  for (const name of await fs.readdir(config.DRIVER_DIR).catch(() => [] as string[])) {
    const dir = path.join(config.DRIVER_DIR, name);
    if ((await driverEndedAt(dir)) < cutoff && (await removeFolder(config.DRIVER_DIR, name))) summary.driverFolders++;
  }
  // What other cluster types' ended drivers left on this host (a yarn driver's folder): each type's own sweep.
  for (const type of CLUSTER_TYPES)
    summary.driverFolders += (await CLUSTER_TYPE_DEFS[type].sweep?.(config, cutoff)) ?? 0;
  // Saved once, when the driver's pods were deleted: the folder's time is when the driver ended.
  const savedLogs = path.join(config.STACK_DIR, 'k8s-logs');
  for (const name of await fs.readdir(savedLogs).catch(() => [] as string[])) {
    const st = await fs.stat(path.join(savedLogs, name)).catch(() => undefined);
    if (st?.isDirectory() && st.mtimeMs < cutoff && (await removeFolder(savedLogs, name))) summary.savedLogFolders++;
  }
  // Copied once, when the driver's pods were removed (k8s/event-logs.ts): the file's time is when it ended.
  // Links (local drivers' logs in their folders) go with those folders, as the History Server's prune sees.
  if (config.SPARK_HISTORY_DIR) {
    for (const name of await fs.readdir(config.SPARK_HISTORY_DIR).catch(() => [] as string[])) {
      const file = path.join(config.SPARK_HISTORY_DIR, name);
      const st = await fs.lstat(file).catch(() => undefined);
      if (st?.isFile() && st.mtimeMs < cutoff && (await fs.rm(file, { force: true }).then(() => true)))
        summary.historyLogs++;
    }
  }
  summary.auditRecords = (
    await store.col(Collections.audit).deleteMany({ time: { $lt: summary.auditCutoff } })
  ).deletedCount;
  return summary;
}

/**
 * When a driver folder's process ended: the newest of its exit file, removal marker and log (the folder's
 * own time if it has none of them); Infinity while its process group is still alive.
 */
async function driverEndedAt(dir: string): Promise<number> {
  const st = await fs.stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) return Infinity;
  const pid = await readIntFile(path.join(dir, DRIVER_FILES.pid));
  if (pid && pid.value > 1 && (await groupAlive(pid.value, dir))) return Infinity;
  const times = await Promise.all(
    [DRIVER_FILES.exit, DRIVER_FILES.removed, DRIVER_FILES.log, DRIVER_FILES.pid].map((f) =>
      fs.stat(path.join(dir, f)).then(
        (s) => s.mtimeMs,
        () => 0,
      ),
    ),
  );
  return Math.max(st.mtimeMs, ...times);
}

async function removeFolder(parent: string, name: string): Promise<boolean> {
  if (!SAFE_NAME.test(name)) return false;
  const dir = path.join(parent, name);
  if (!(await fs.stat(dir).catch(() => undefined))) return false;
  await fs.rm(dir, { recursive: true, force: true });
  return true;
}

/** Id of the Temporal Schedule that runs the sweep for one task queue. */
export const retentionScheduleId = (taskQueue: string) => `retention/${taskQueue}`;

/** Creates the hourly Temporal Schedule of the sweep if it does not exist (the worker process calls it at start). */
export async function ensureRetentionSchedule(temporal: Client, taskQueue: string): Promise<void> {
  const scheduleId = retentionScheduleId(taskQueue);
  try {
    await temporal.schedule.getHandle(scheduleId).describe();
    return;
  } catch (e) {
    if (!(e instanceof ScheduleNotFoundError)) throw e;
  }
  try {
    await temporal.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1h' }] },
      action: { type: 'startWorkflow', workflowType: 'retentionSweepWorkflow', taskQueue, args: [] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      state: { note: 'removes what ended more than RETENTION_DAYS ago', triggerImmediately: true },
    });
  } catch (e) {
    // Another worker created it first.
    if (!/already/i.test((e as Error).message ?? '')) throw e;
  }
}
