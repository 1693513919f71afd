// The one projection path: workflows hand their whole current record and a version (a counter the
// workflow owns); a write whose version is not newer than the stored one is dropped, so a late or
// replayed write never moves a state backwards.
import type { Collection, Document } from 'mongodb';
import { whyNoReadyInstance, type InstanceView } from '../domain/broken-clusters/no-ready-instance';
import { parseTags } from '../domain/delimited';
import { endReplacesFilter } from '../domain/job-transitions';
import { SUBMITTED_VERSION } from '../domain/job';
import { isTerminal, JobState, JobType } from '../domain/states';
import type { ConnectServerRecord } from '../domain/connect';
import type { SqlEngineRecord } from '../domain/sql-engine';
import type { Group, Job, JobInstanceResult, Schedule } from '../domain/types';
import { Collections, type Store } from '../lib/mongo';

// A whole-document replace (not $set) so that every change event carries the record exactly as written:
// a replace event's fullDocument is the replacement itself, and stream subscribers see every state.
async function upsertVersioned(
  col: Collection<Document>,
  id: string,
  version: number,
  doc: Document,
  also: Document = {},
): Promise<boolean> {
  try {
    const r = await col.replaceOne(
      { _id: id, version: { $lt: version }, ...also } as Document,
      { ...doc, version },
      { upsert: true },
    );
    return r.modifiedCount + r.upsertedCount > 0;
  } catch (e) {
    // The filter missed because the stored version is newer (or `also` refused it); the upsert then collides on _id.
    if ((e as { code?: number }).code === 11000) return false;
    throw e;
  }
}

/** Tags are also stored as a map so list filters can match key=value pairs. */
const tagMap = (tags: string) => {
  try {
    return parseTags('tags', tags);
  } catch {
    return {};
  }
};

/** What a job's end kept of its stored record: the start its watch wrote with BUSY, which the workflow did not see. */
export type KeptStart = Partial<Pick<Job, 'startTime' | 'appId'>>;

export function createProjection(store: Store) {
  async function writeJob(job: Job, version: number): Promise<{ written: boolean; kept: KeptStart }> {
    const col = store.col(Collections.jobs);
    const doc: Document = { ...job, tagMap: tagMap(job.tags) };
    const kept: KeptStart = {};
    if (!isTerminal(job.state)) return { written: await upsertVersioned(col, job.jobId, version, doc), kept };
    // A job's end is written by the workflow, or by its watch activity (BUSY on the way, FINISHED when the
    // driver succeeds). A stop or cancel can land while the watch writes, and the workflow, which never got
    // the watch's answer, then ends the job from the record it knew:
    // - it did not see the start time and appId the watch wrote with BUSY: the stored ones are kept (the
    //   appId only from the same try). A record with a start time came from a BUSY record the workflow saw,
    //   so only one without it is looked up (most ends are written with it, and without a read);
    // - the watch had already written FINISHED: that end stays (an ended job does not change state again),
    //   and a later write of the same end (a cleanup note) still goes through.
    if (job.startTime === undefined) {
      const stored = await col.findOne({ _id: job.jobId } as Document, {
        projection: { startTime: 1, appId: 1, attempt: 1 },
      });
      if (typeof stored?.startTime === 'number') doc.startTime = kept.startTime = stored.startTime;
      if (job.appId === undefined && typeof stored?.appId === 'string' && stored.attempt === job.attempt)
        doc.appId = kept.appId = stored.appId;
    }
    const written = await upsertVersioned(col, job.jobId, version, doc, endReplacesFilter(job.state));
    return { written, kept };
  }

  return {
    async projectJob(job: Job, version: number): Promise<boolean> {
      return (await writeJob(job, version)).written;
    },
    /**
     * A try's STARTING record, written by the launch activity. The API writes a submitted job's SUBMITTED record
     * right after it starts the workflow, and that write is nearly always first. When it is not (the API slow or
     * killed right after the start, a worker quick to launch), a first STARTING would create the record, and the
     * API's SUBMITTED write would then be dropped as older: the record's stream would begin at STARTING. So the
     * first try of a single job that finds no record writes SUBMITTED (its version) first, then STARTING. The
     * usual case is one write, as before.
     */
    async projectStarting(job: Job, version: number): Promise<boolean> {
      const col = store.col(Collections.jobs);
      const doc: Document = { ...job, tagMap: tagMap(job.tags) };
      const r = await col.replaceOne({ _id: job.jobId, version: { $lt: version } } as Document, { ...doc, version });
      if (r.matchedCount > 0) return true;
      if (job.jobType === JobType.SINGLE && job.attempt === 1)
        await upsertVersioned(col, job.jobId, SUBMITTED_VERSION, { ...doc, state: JobState.SUBMITTED });
      return upsertVersioned(col, job.jobId, version, doc);
    },
    /**
     * A job's end, written like projectJob, answering what it kept of the stored record, so the workflow's own
     * record (its query and result) shows the start time and appId too.
     */
    async projectJobEnd(job: Job, version: number): Promise<KeptStart> {
      return (await writeJob(job, version)).kept;
    },
    /**
     * What one step of a group workflow changed, in one task: its instances' jobs, then the group record (whose
     * write releases the updates waiting on it, so a reader who sees the group sees its jobs too).
     */
    async projectGroupStep(
      jobs: { job: Job; version: number }[],
      group?: { group: Omit<Group, 'jobs'>; version: number },
    ): Promise<void> {
      await Promise.all(jobs.map((w) => writeJob(w.job, w.version)));
      if (group) {
        const g = group.group;
        await upsertVersioned(store.col(Collections.groups), g.id, group.version, { ...g, tagMap: tagMap(g.tags) });
      }
    },
    async projectSchedule(schedule: Omit<Schedule, 'jobs'>, version: number): Promise<boolean> {
      return upsertVersioned(store.col(Collections.schedules), schedule.id, version, {
        ...schedule,
        tagMap: tagMap(schedule.tags),
      });
    },
    async projectResult(result: JobInstanceResult, version: number): Promise<boolean> {
      return upsertVersioned(store.col(Collections.results), result.jobInstanceId, version, { ...result });
    },
    async projectSqlEngine(engine: SqlEngineRecord, version: number): Promise<boolean> {
      return upsertVersioned(store.col(Collections.sqlEngines), engine.id, version, { ...engine });
    },
    /** A stopped engine leaves the read model; its workflow ends right after, so no later write follows. */
    async deleteSqlEngineRecord(engineId: string): Promise<void> {
      await store.col(Collections.sqlEngines).deleteOne({ _id: engineId } as Document);
    },
    async projectConnectServer(server: ConnectServerRecord, version: number): Promise<boolean> {
      return upsertVersioned(store.col(Collections.connectServers), server.id, version, { ...server });
    },
    /** A stopped Connect server leaves the read model, as a stopped engine does. */
    async deleteConnectServerRecord(serverId: string): Promise<void> {
      await store.col(Collections.connectServers).deleteOne({ _id: serverId } as Document);
    },
    /** Why a group has no ready instance, from its read model (an execution that waited in vain says it). */
    async whyNoReadyInstance(groupId: string): Promise<string> {
      const [g, jobs] = await Promise.all([
        store.col(Collections.groups).findOne({ _id: groupId } as Document),
        store.col(Collections.jobs).find({ groupId }).sort({ submitTime: -1 }).limit(20).toArray(),
      ]);
      return whyNoReadyInstance(g?.error as string | undefined, jobs as unknown as InstanceView[]);
    },
    /** Removes a job's record (DELETE /job/{id}); done by an activity so the read model keeps one writer. */
    async deleteJobRecord(jobId: string): Promise<void> {
      await store.col(Collections.jobs).deleteOne({ _id: jobId } as Document);
    },
    /** Removes a deleted schedule's record and frees its name (its jobs stay, as ordinary jobs). */
    async deleteScheduleRecord(scheduleId: string, name: string): Promise<void> {
      await store.col(Collections.schedules).deleteOne({ _id: scheduleId } as Document);
      await store.col(Collections.names).deleteOne({ _id: `schedule:${name}`, ownerId: scheduleId } as Document);
    },
    /** Removes a deleted group's record, its instance jobs and its results. */
    async deleteGroupRecords(groupId: string): Promise<void> {
      await Promise.all([
        store.col(Collections.jobs).deleteMany({ groupId }),
        store.col(Collections.results).deleteMany({ groupId }),
      ]);
      const g = await store.col(Collections.groups).findOneAndDelete({ _id: groupId } as Document);
      if (g) await store.col(Collections.names).deleteOne({ _id: `group:${g.name}` } as Document);
    },
  };
}
