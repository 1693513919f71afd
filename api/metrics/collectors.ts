// What fills the API's metrics besides the HTTP middleware: counts read from MongoDB at each scrape, and
// observations of the change feeds (an execution's result, a scheduled job's submission, an SQL
// statement's completion), each counted once per id however often its document changes afterwards.
// The feeds are observed from the first scrape on: an API nobody scrapes keeps no change stream open for it.
import type { Document } from 'mongodb';
import { Collections, type Store } from '../../lib/mongo';
import type { Feeds } from '../streams/feed';
import type { ApiMetrics, StoreStats } from './registry';

/** Ids already observed, forgetting the oldest beyond `limit` (documents change a few times, then rest). */
export class SeenIds {
  private readonly ids = new Set<string>();
  constructor(private readonly limit = 20_000) {}
  /** True the first time an id is offered. */
  first(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value as string);
    return true;
  }
}

const seconds = (from: unknown, to: unknown): number | undefined =>
  typeof from === 'number' && typeof to === 'number' && to >= from ? (to - from) / 1000 : undefined;

/** A finished execution: its latency and outcome, once. */
export function observeResult(m: ApiMetrics, seen: SeenIds, d: Document): void {
  if (typeof d.endTime !== 'number' || typeof d.jobInstanceId !== 'string' || !seen.first(d.jobInstanceId)) return;
  const group = String(d.groupId ?? '');
  m.executions.inc({ group, outcome: d.error ? 'error' : 'success' });
  const s = seconds(d.startTime, d.endTime);
  if (s !== undefined) m.executionDuration.observe({ group }, s);
}

/**
 * A scheduled run's job, once: its id is `sched-<scheduleId>-<nominal time, RFC 3339>` (Temporal appends
 * the nominal time to the schedule's workflow id), its submitTime when the service accepted it.
 */
export function observeScheduledJob(m: ApiMetrics, seen: SeenIds, d: Document): void {
  const { jobId, scheduleId, submitTime } = d;
  if (typeof jobId !== 'string' || typeof scheduleId !== 'string' || typeof submitTime !== 'number') return;
  const prefix = `sched-${scheduleId}-`;
  if (!jobId.startsWith(prefix)) return;
  const nominal = Date.parse(jobId.slice(prefix.length));
  if (Number.isNaN(nominal) || !seen.first(jobId)) return;
  m.scheduleFireDelay.observe({ schedule: scheduleId }, Math.max(0, submitTime - nominal) / 1000);
}

/** A statement that ended, once. */
export function observeStatement(m: ApiMetrics, seen: SeenIds, d: Document): void {
  if (d.state === 'RUNNING' || typeof d.completionTime !== 'number' || typeof d.id !== 'string') return;
  if (!seen.first(d.id)) return;
  const engine = String(d.engine ?? '');
  m.sqlStatements.inc({ engine, state: String(d.state) });
  const s = seconds(d.startTime ?? d.creationTime, d.completionTime);
  if (s !== undefined) m.sqlStatementDuration.observe({ engine }, s);
}

/**
 * The store's size: collStats of each of the service's collections (one not created yet counts 0), dbStats,
 * and the oplog's entries (left out where the server does not let the API read local.oplog.rs).
 */
export async function readStoreStats(store: Store): Promise<StoreStats> {
  const collections = await Promise.all(
    Object.values(Collections).map(async (name) => {
      const s = await store.db.command({ collStats: name }).catch(() => undefined);
      return { name, documents: Number(s?.count ?? 0), bytes: Number(s?.size ?? 0) };
    }),
  );
  const db = await store.db.command({ dbStats: 1 }).catch(() => undefined);
  // WiredTiger reports no fileSize; an in-memory server reports no storage at all (left out).
  const fileSize = Number(db?.fileSize ?? 0);
  const storage = Number(db?.storageSize ?? 0);
  const diskBytes = fileSize > 0 ? fileSize : storage > 0 ? storage + Number(db?.indexSize ?? 0) : undefined;
  const oplogEntries = await store.client
    .db('local')
    .collection('oplog.rs')
    .estimatedDocumentCount()
    .catch(() => undefined);
  return { collections, diskBytes, oplogEntries };
}

/** Wires the metrics to the store and the feeds; returns what stops the observations. */
export function attachCollectors(m: ApiMetrics, store: Store, feeds: Feeds): () => void {
  m.sources.jobCounts = async () => {
    const rows = await store
      .col(Collections.jobs)
      .aggregate<{ _id: { state?: string; cluster?: string; type?: string }; n: number }>([
        { $group: { _id: { state: '$state', cluster: '$clusterName', type: '$jobType' }, n: { $sum: 1 } } },
      ])
      .toArray();
    return rows.map((r) => ({
      labels: { state: r._id.state ?? '', cluster: r._id.cluster ?? '', type: r._id.type ?? '' },
      n: r.n,
    }));
  };
  m.sources.store = () => readStoreStats(store);
  m.sources.subscribers = () => ({
    jobs: feeds.jobs.clientCount,
    results: feeds.results.clientCount,
    sqlHistory: feeds.sqlHistory.clientCount,
  });
  const results = new SeenIds();
  const scheduled = new SeenIds();
  const statements = new SeenIds();
  const stops = [
    feeds.results.observe((e) => observeResult(m, results, e.doc)),
    feeds.jobs.observe((e) => observeScheduledJob(m, scheduled, e.doc)),
    feeds.sqlHistory.observe((e) => observeStatement(m, statements, e.doc)),
  ];
  return () => stops.forEach((stop) => stop());
}
