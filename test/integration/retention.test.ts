// The retention sweep against a real MongoDB-protocol server, real driver folders (one with a live process)
// and a real Temporal server: run as its workflow on the harness's worker, it removes what ended more than
// RETENTION_DAYS ago (jobs, executions, driver folders, query history, the Livy records of those jobs and
// executions; audit records: AUDIT_RETENTION_DAYS) and nothing else; the worker's Temporal Schedule
// for it is created once.
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRetentionSchedule, retentionScheduleId, type RetentionSummary } from '../../activities/retention';
import { killDriver, spawnDriver, waitUntil } from '../../activities/adapters/local/process';
import { Collections } from '../../lib/mongo';
import { call, startHarness, type Harness } from '../harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { RETENTION_DAYS: '7', AUDIT_RETENTION_DAYS: '30' } });
});
afterAll(async () => h?.stop());

const DAY = 86_400_000;
const now = Date.now();
const id = (what: string) => `${what}-${randomUUID().slice(0, 8)}`;

/** A driver folder whose files all date from `at`. */
function driverFolder(name: string, at: number, files: Record<string, string>): string {
  const dir = path.join(h.config.DRIVER_DIR, name);
  mkdirSync(path.join(dir, 'eventlog'), { recursive: true });
  writeFileSync(path.join(dir, 'eventlog', 'local-1700000000000'), '{}\n');
  for (const [f, content] of Object.entries(files)) writeFileSync(path.join(dir, f), content);
  for (const f of [...Object.keys(files), 'eventlog', '.']) utimesSync(path.join(dir, f), at / 1000, at / 1000);
  return dir;
}

const job = (jobId: string, state: string, endTime?: number) => ({
  _id: jobId,
  jobId,
  jobName: jobId,
  jobType: 'SINGLE',
  state,
  submitTime: now - 30 * DAY,
  ...(endTime && { endTime }),
});

describe('retention sweep', () => {
  it('removes finished jobs, executions and ended driver folders older than RETENTION_DAYS, and nothing else', async () => {
    const jobs = {
      oldFinished: id('old-finished'),
      oldFailed: id('old-failed'),
      recentFinished: id('recent-finished'),
      oldRunning: id('old-running'),
    };
    await h.store
      .col(Collections.jobs)
      .insertMany([
        job(jobs.oldFinished, 'FINISHED', now - 8 * DAY),
        job(jobs.oldFailed, 'FAILED', now - 9 * DAY),
        job(jobs.recentFinished, 'FINISHED', now - 6 * DAY),
        job(jobs.oldRunning, 'BUSY'),
      ] as Document[]);
    for (const j of [jobs.oldFinished, jobs.recentFinished])
      mkdirSync(path.join(h.config.ARTIFACT_DIR, j, 'pyFiles'), { recursive: true });
    // Audit records have their own, longer retention.
    const audit = { old: id('audit-old'), kept: id('audit-kept') };
    const auditDoc = (_id: string, time: number) => ({
      _id,
      principal: 'key:k1',
      role: 'operator',
      method: 'POST',
      path: '/api/v1/job/submit',
      resourceId: null,
      status: 200,
      time,
    });
    await h.store
      .col(Collections.audit)
      .insertMany([auditDoc(audit.old, now - 31 * DAY), auditDoc(audit.kept, now - 8 * DAY)] as Document[]);
    const results = { old: id('res-old'), recent: id('res-recent'), open: id('res-open') };
    await h.store.col(Collections.results).insertMany([
      { _id: results.old, jobInstanceId: results.old, groupId: 'g', endTime: now - 8 * DAY },
      { _id: results.recent, jobInstanceId: results.recent, groupId: 'g', endTime: now - DAY },
      { _id: results.open, jobInstanceId: results.open, groupId: 'g' },
    ] as Document[]);

    // Query history: statements that ended before the cutoff go, and so does one a crashed API left RUNNING.
    const history = { old: id('q-old'), recent: id('q-recent'), orphan: id('q-orphan'), running: id('q-running') };
    const statement = (_id: string, state: string, creationTime: number, completionTime?: number) => ({
      _id,
      id: _id,
      engine: 'SPARK_SQL',
      state,
      statement: 'select 1',
      creationTime,
      ...(completionTime && { completionTime }),
    });
    await h.store
      .col(Collections.sqlHistory)
      .insertMany([
        statement(history.old, 'FINISHED', now - 9 * DAY, now - 9 * DAY),
        statement(history.recent, 'ERROR', now - 8 * DAY, now - DAY),
        statement(history.orphan, 'RUNNING', now - 10 * DAY),
        statement(history.running, 'RUNNING', now - 60_000),
      ] as Document[]);
    // The Livy API's records of batches (jobs) and statements (executions) go with what they stand for.
    const livy = {
      oldBatch: id('batch-old'),
      recentBatch: id('batch-recent'),
      oldStmt: id('st-old'),
      session: id('s'),
    };
    await h.store.col(Collections.livy).insertMany([
      { _id: livy.oldBatch, type: 'batch', id: 1, jobId: jobs.oldFinished },
      { _id: livy.recentBatch, type: 'batch', id: 2, jobId: jobs.recentFinished },
      { _id: livy.oldStmt, type: 'statement', sessionId: 1, id: 0, jobInstanceId: results.old },
      { _id: livy.session, type: 'session', id: 1, groupId: 'g' },
    ] as Document[]);

    // Logs k8s drivers left behind when their pods were deleted.
    const savedLogs = path.join(h.config.STACK_DIR, 'k8s-logs');
    const savedOld = path.join(savedLogs, id('inst-old'));
    const savedRecent = path.join(savedLogs, id('inst-recent'));
    for (const [dir, at] of [
      [savedOld, now - 8 * DAY],
      [savedRecent, now - DAY],
    ] as const) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'driver.log'), 'saved\n');
      utimesSync(dir, at / 1000, at / 1000);
    }

    // Spark Connect sessions: an old ended one goes; a recent ended one and an active one stay.
    const sessions = { old: id('cs-old'), recent: id('cs-recent'), active: id('cs-active') };
    await h.store.col(Collections.connectSessions).insertMany([
      { _id: sessions.old, id: sessions.old, state: 'ENDED', startTime: now - 9 * DAY, endTime: now - 8 * DAY },
      { _id: sessions.recent, id: sessions.recent, state: 'ENDED', startTime: now - 2 * DAY, endTime: now - DAY },
      { _id: sessions.active, id: sessions.active, state: 'ACTIVE', startTime: now - 9 * DAY },
    ] as Document[]);

    // Event logs k8s drivers left in the History Server's folder: old copies go, recent ones and links stay.
    const historyDir = h.config.SPARK_HISTORY_DIR;
    mkdirSync(historyDir, { recursive: true });
    const historyLogs = {
      old: path.join(historyDir, id('spark-old')),
      recent: path.join(historyDir, id('spark-recent')),
      link: path.join(historyDir, id('eventlog_v2_local-old')),
    };
    for (const [file, at] of [
      [historyLogs.old, now - 8 * DAY],
      [historyLogs.recent, now - DAY],
    ] as const) {
      writeFileSync(file, '{"Event":"SparkListenerLogStart"}\n');
      utimesSync(file, at / 1000, at / 1000);
    }
    symlinkSync(savedOld, historyLogs.link);
    lutimesSync(historyLogs.link, (now - 8 * DAY) / 1000, (now - 8 * DAY) / 1000);

    // YARN drivers' folders: gone once their removal marker is older than the cutoff; one without is kept.
    const yarnCluster = path.join(h.config.STACK_DIR, 'yarn', id('yarn-cluster'));
    const yarnFolders = {
      oldRemoved: path.join(yarnCluster, id('y-old')),
      recentRemoved: path.join(yarnCluster, id('y-recent')),
      running: path.join(yarnCluster, id('y-running')),
    };
    for (const [dir, at, marker] of [
      [yarnFolders.oldRemoved, now - 8 * DAY, true],
      [yarnFolders.recentRemoved, now - DAY, true],
      [yarnFolders.running, now - 20 * DAY, false],
    ] as const) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'appid'), 'application_1_0001');
      if (marker) writeFileSync(path.join(dir, 'removed'), 'x\n');
      for (const f of [marker ? 'removed' : 'appid', '.']) utimesSync(path.join(dir, f), at / 1000, at / 1000);
    }

    const folders = {
      oldEnded: driverFolder(id('old-ended'), now - 8 * DAY, { exit: '0\n', 'driver.log': 'done\n' }),
      oldRemoved: driverFolder(id('old-removed'), now - 10 * DAY, { removed: 'x\n', 'driver.log': '' }),
      recentEnded: driverFolder(id('recent-ended'), now - 2 * DAY, { exit: '1\n', 'driver.log': '' }),
      live: path.join(h.config.DRIVER_DIR, id('live')),
    };
    // A driver still running, whose files look old: its process group keeps it.
    mkdirSync(folders.live, { recursive: true });
    expect(await spawnDriver(folders.live, ['sleep', '120'], process.env, path.join(folders.live, 'driver.log'))).toBe(
      undefined,
    );
    expect(await waitUntil(() => existsSync(path.join(folders.live, 'pid')), 5_000)).toBe(true);
    const livePid = Number(readFileSync(path.join(folders.live, 'pid'), 'utf8'));
    for (const f of ['pid', 'driver.log', '.'])
      utimesSync(path.join(folders.live, f), (now - 20 * DAY) / 1000, (now - 20 * DAY) / 1000);

    try {
      const summary: RetentionSummary = await h.temporal.workflow.execute('retentionSweepWorkflow', {
        taskQueue: h.config.TASK_QUEUE,
        workflowId: id('retention-test'),
        args: [],
      });
      expect(summary).toMatchObject({
        jobs: 2,
        results: 1,
        driverFolders: 3,
        artifactFolders: 1,
        savedLogFolders: 1,
        historyLogs: 1,
        sqlHistory: 2,
        connectSessions: 1,
        livyRecords: 2,
        auditRecords: 1,
      });
      expect(existsSync(savedOld)).toBe(false);
      expect(existsSync(savedRecent)).toBe(true);
      const sessionsLeft = await h.store
        .col(Collections.connectSessions)
        .find({ _id: { $in: Object.values(sessions) } } as Document)
        .toArray();
      expect(sessionsLeft.map((d) => d._id).sort()).toEqual([sessions.recent, sessions.active].sort());
      expect(existsSync(historyLogs.old)).toBe(false);
      expect(existsSync(historyLogs.recent)).toBe(true);
      expect(lstatSync(historyLogs.link).isSymbolicLink()).toBe(true);
      expect(summary.cutoff).toBeGreaterThan(now - 7 * DAY - 60_000);

      const left = async (col: 'jobs' | 'results' | 'audit' | 'sqlHistory' | 'livy', ids: string[]) =>
        (
          await h.store
            .col(Collections[col])
            .find({ _id: { $in: ids } } as Document)
            .toArray()
        ).map((d) => d._id);
      expect((await left('jobs', Object.values(jobs))).sort()).toEqual([jobs.recentFinished, jobs.oldRunning].sort());
      expect((await left('results', Object.values(results))).sort()).toEqual([results.recent, results.open].sort());
      expect(await left('audit', Object.values(audit))).toEqual([audit.kept]);
      expect((await left('sqlHistory', Object.values(history))).sort()).toEqual(
        [history.recent, history.running].sort(),
      );
      expect((await left('livy', Object.values(livy))).sort()).toEqual([livy.recentBatch, livy.session].sort());
      expect((await call(h, 'GET', `/job/${jobs.oldFinished}`)).status).toBe(404);
      expect(existsSync(path.join(h.config.ARTIFACT_DIR, jobs.oldFinished))).toBe(false);
      expect(existsSync(path.join(h.config.ARTIFACT_DIR, jobs.recentFinished))).toBe(true);
      expect(existsSync(folders.oldEnded)).toBe(false);
      expect(existsSync(folders.oldRemoved)).toBe(false);
      expect(existsSync(folders.recentEnded)).toBe(true);
      expect(existsSync(path.join(folders.live, 'pid'))).toBe(true);
      expect(existsSync(yarnFolders.oldRemoved)).toBe(false);
      expect(existsSync(yarnFolders.recentRemoved)).toBe(true);
      expect(existsSync(yarnFolders.running)).toBe(true);

      // A second sweep finds nothing more.
      const again: RetentionSummary = await h.temporal.workflow.execute('retentionSweepWorkflow', {
        taskQueue: h.config.TASK_QUEUE,
        workflowId: id('retention-test'),
        args: [],
      });
      expect(again).toMatchObject({
        jobs: 0,
        results: 0,
        driverFolders: 0,
        artifactFolders: 0,
        savedLogFolders: 0,
        historyLogs: 0,
        sqlHistory: 0,
        connectSessions: 0,
        livyRecords: 0,
        auditRecords: 0,
      });
    } finally {
      await killDriver(livePid, folders.live);
    }
  });

  it('has the worker create its hourly Temporal Schedule once', async () => {
    const queue = h.config.TASK_QUEUE;
    await ensureRetentionSchedule(h.temporal, queue);
    await ensureRetentionSchedule(h.temporal, queue);
    const handle = h.temporal.schedule.getHandle(retentionScheduleId(queue));
    try {
      const d = await handle.describe();
      expect(d.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'retentionSweepWorkflow',
        taskQueue: queue,
      });
      expect(d.spec.intervals?.[0]?.every).toBe(3_600_000);
    } finally {
      await handle.delete();
    }
  });
});
