// MongoDB: the read models (jobs, groups, schedules, job instance results), written only by activities,
// and the documents the API owns (clusters, saved SQL statements, notebooks, query history).
// Only the standard driver API is used, so a real replica set works unchanged.
import { type Collection, type Db, MongoClient, MongoServerSelectionError, type Document } from 'mongodb';
import { ClusterType } from '../domain/states';
import type { Config } from './config';

export const Collections = {
  clusters: 'clusters',
  jobs: 'jobs',
  groups: 'groups',
  schedules: 'schedules',
  results: 'jobInstanceResults',
  sqlSaved: 'sqlSaved',
  notebooks: 'sqlNotebooks',
  /** Query history, written by the API that ran each statement (RUNNING, then its final state). */
  sqlHistory: 'sqlHistory',
  /** SQL engine read model, written by the engine workflows' projection. */
  sqlEngines: 'sqlEngines',
  /** Spark Connect server read model, written by the server workflows' projection. */
  connectServers: 'connectServers',
  /** Spark Connect sessions, written by the API's gateway (api/connect/gateway.ts) as they start and end. */
  connectSessions: 'connectSessions',
  /** Name reservations of groups and schedules (`group:<name>`), owned by the API, so two creates of one name cannot both win. */
  names: 'names',
  /** Integer ids of the Livy API (api/livy/): counters, sessions → groups, statements → executions, batches → jobs. */
  livy: 'livyIds',
  /** API keys (a SHA-256 of each key, never the key), owned by the API (api/auth/keys.ts). */
  apiKeys: 'apiKeys',
  /** Audit trail of state-changing calls, written by the API (api/audit/). */
  audit: 'audit',
  /**
   * The namespace each k8s driver was launched in (`<clusterId>/<driverId>`), written by whoever launches it
   * (worker, or API at submit) before its pod, dropped when it is removed (activities/adapters/placements.ts).
   */
  placements: 'driverPlacements',
} as const;

export interface Store {
  client: MongoClient;
  db: Db;
  col<T extends Document = Document>(name: (typeof Collections)[keyof typeof Collections]): Collection<T>;
  close(): Promise<void>;
}

/** How often a connection pool checks its minimum size: see quietPools. */
export const POOL_CHECK_MS = 5_000;

/**
 * The driver checks each connection pool's minimum size every 100 ms: a wake-up ten times a second in every
 * process (and thread) that holds a client, busy or idle, though no pool here has a minimum (minPoolSize 0)
 * and a checkout drops a dead connection itself. On a VM where waking an idle CPU is dear, that one timer cost
 * about 2 % of a core a client (an idle client alone: 3.4-4.1 % with it, 1.9 % without; bench/README.md,
 * bench:idle). Its period is an internal option
 * (minPoolSizeCheckFrequencyMS), refused in the options and the URL, read from the client's parsed options when
 * a pool is made: set there, before connecting. A driver without it ignores it
 * (test/integration/store-pools.test.ts says so).
 */
export function quietPools(client: MongoClient): MongoClient {
  (client.options as { minPoolSizeCheckFrequencyMS?: number }).minPoolSizeCheckFrequencyMS = POOL_CHECK_MS;
  return client;
}

export async function connectStore(config: Pick<Config, 'MONGO_URL' | 'MONGO_DB'>): Promise<Store> {
  const client = quietPools(new MongoClient(config.MONGO_URL, { serverSelectionTimeoutMS: 10_000, maxPoolSize: 50 }));
  try {
    await client.connect();
  } catch (e) {
    await client.close().catch(() => undefined);
    throw withServerErrors(e);
  }
  const db = client.db(config.MONGO_DB);
  return {
    client,
    db,
    col: <T extends Document>(name: string) => db.collection<T>(name),
    close: () => client.close(),
  };
}

/**
 * A server selection timeout says only "timed out after 10000 ms"; what each server answered (refused, reset,
 * not a MongoDB) is in its description. Added to the message, by host and port: never the URL, which may
 * hold a password.
 */
function withServerErrors(e: unknown): unknown {
  if (!(e instanceof MongoServerSelectionError) || !e.reason) return e;
  const seen = [...e.reason.servers.values()].map(
    (s) => `${s.address}: ${s.error?.message ?? `no answer (${s.type})`}`,
  );
  if (seen.length) e.message = `${e.message} (${seen.join('; ')})`;
  return e;
}

/** Indexes and the `default` local cluster. Idempotent; run by the API and the worker at start-up. */
export async function prepareStore(store: Store): Promise<void> {
  const { col } = store;
  await Promise.all([
    col(Collections.clusters).createIndex({ name: 1 }, { unique: true }),
    // Not unique: names are reserved in `names` before a workflow starts, and a projection must never fail.
    col(Collections.groups).createIndex({ name: 1 }),
    col(Collections.schedules).createIndex({ name: 1 }),
    col(Collections.jobs).createIndex({ groupId: 1 }),
    col(Collections.jobs).createIndex({ scheduleId: 1 }),
    col(Collections.jobs).createIndex({ submitTime: -1 }),
    col(Collections.results).createIndex({ groupId: 1 }),
    col(Collections.sqlSaved).createIndex({ name: 1 }),
    col(Collections.notebooks).createIndex({ name: 1 }),
    col(Collections.sqlHistory).createIndex({ creationTime: -1 }),
    col(Collections.sqlHistory).createIndex({ clusterId: 1 }),
    col(Collections.livy).createIndex({ type: 1, id: 1 }),
    col(Collections.livy).createIndex({ sessionId: 1 }),
    col(Collections.apiKeys).createIndex({ hash: 1 }, { unique: true }),
    col(Collections.audit).createIndex({ time: -1 }),
    col(Collections.audit).createIndex({ principal: 1 }),
  ]);
  const now = Date.now();
  try {
    await col(Collections.clusters).updateOne(
      { _id: 'default' as never },
      {
        $setOnInsert: {
          id: 'default',
          name: 'default',
          description: 'Local Spark (spark-submit --master local[N]) on the worker host',
          type: ClusterType.LOCAL,
          url: 'local',
          sparkStorage: 's3',
          storages: {},
          memorySettings: { dynamicAllocation: false },
          defaultApplicationConfig: '',
          createdTime: now,
        },
      },
      { upsert: true },
    );
  } catch (e) {
    // Two processes starting at once both upsert; the loser sees a duplicate key and the cluster exists.
    if ((e as { code?: number }).code !== 11000) throw e;
  }
}
