// The API's Prometheus metrics (GET /metrics, outside /api/v1): one registry per API process.
//   - HTTP: request latency by route template, method and status (middleware in http.ts).
//   - Read models, counted on each scrape: jobs by state, cluster and type (collectors.ts).
//   - From the change feeds every API process already follows (collectors.ts): group executions and their
//     latency by group, schedule fire delay, SQL statement latency by engine. Each API replica sees every
//     change, so each reports the whole service: aggregate replicas with max(), not sum().
//   - Stream subscribers by feed (Socket.IO and SSE), read from the feeds.
//   - The store's size, read at each scrape (collStats, dbStats): documents and bytes per collection, the
//     database's bytes on disk, the oplog's entries: what retention and compaction keep bounded.
// The worker's metrics (Temporal SDK, activity latency by adapter) are served by the worker (worker/metrics.ts).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds: from a cache hit (sub-millisecond) to a Spark job's minutes. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Where the scrape-time gauges read from; set by collectors.ts (empty until then). */
export interface GaugeSources {
  jobCounts?: () => Promise<{ labels: { state: string; cluster: string; type: string }; n: number }[]>;
  subscribers?: () => Record<string, number>;
  store?: () => Promise<StoreStats>;
}

/** The store's size: each collection's documents and data bytes, the bytes on disk, the oplog's entries. */
export interface StoreStats {
  collections: { name: string; documents: number; bytes: number }[];
  /** dbStats' fileSize where the server reports one (mongo-java-server: its whole data file), else storage + index bytes. */
  diskBytes?: number;
  /** Entries of local.oplog.rs, where the server lets the API count them. */
  oplogEntries?: number;
}

export interface ApiMetrics {
  registry: Registry;
  sources: GaugeSources;
  /** Called before each scrape: the gauges read the store afresh. */
  newScrape(): void;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  jobs: Gauge<'state' | 'cluster' | 'type'>;
  executions: Counter<'group' | 'outcome'>;
  executionDuration: Histogram<'group'>;
  scheduleFireDelay: Histogram<'schedule'>;
  sqlStatements: Counter<'engine' | 'state'>;
  sqlStatementDuration: Histogram<'engine'>;
  streamSubscribers: Gauge<'feed'>;
  storeDocuments: Gauge<'collection'>;
  storeDataBytes: Gauge<'collection'>;
  storeDiskBytes: Gauge;
  storeOplogEntries: Gauge;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  // The event loop's delay is sampled by a timer: every 10 ms by default, a wake-up a hundred times a second
  // in an idle API (3 % of a core on a VM where waking an idle CPU is dear; bench/README.md, bench:idle).
  // Every 100 ms still catches any stall longer than that, and the lag at each scrape is measured apart.
  collectDefaultMetrics({ register: registry, prefix: 'spark_orchestrator_api_', eventLoopMonitoringPrecision: 100 });
  const registers = [registry];
  const sources: GaugeSources = {};
  // One read of the store per scrape serves its four gauges (each collects on its own); newScrape() starts the next.
  let storeRead: Promise<StoreStats | undefined> | undefined;
  const storeStats = (): Promise<StoreStats | undefined> =>
    (storeRead ??= sources.store?.() ?? Promise.resolve(undefined));
  return {
    registry,
    sources,
    newScrape: () => void (storeRead = undefined),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests of the REST API by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    jobs: new Gauge({
      name: 'spark_jobs',
      help: 'Jobs in the read model by state, cluster and type (counted at each scrape)',
      labelNames: ['state', 'cluster', 'type'],
      registers,
      async collect() {
        const rows = (await sources.jobCounts?.()) ?? [];
        this.reset();
        for (const r of rows) this.set(r.labels, r.n);
      },
    }),
    executions: new Counter({
      name: 'spark_group_executions_total',
      help: 'Group executions that ended, by group and outcome (success, error)',
      labelNames: ['group', 'outcome'],
      registers,
    }),
    executionDuration: new Histogram({
      name: 'spark_group_execution_duration_seconds',
      help: 'Time from an execution starting in a driver to its result, by group',
      labelNames: ['group'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    scheduleFireDelay: new Histogram({
      name: 'spark_schedule_fire_delay_seconds',
      help: "From a scheduled run's nominal time to its job's submission, by schedule",
      labelNames: ['schedule'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    sqlStatements: new Counter({
      name: 'spark_sql_statements_total',
      help: 'SQL statements that ended, by engine type and final state',
      labelNames: ['engine', 'state'],
      registers,
    }),
    sqlStatementDuration: new Histogram({
      name: 'spark_sql_statement_duration_seconds',
      help: 'SQL statements from start to completion, by engine type',
      labelNames: ['engine'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    streamSubscribers: new Gauge({
      name: 'spark_stream_subscribers',
      help: 'Open stream subscriptions (Socket.IO and SSE) by feed',
      labelNames: ['feed'],
      registers,
      collect() {
        for (const [feed, n] of Object.entries(sources.subscribers?.() ?? {})) this.set({ feed }, n);
      },
    }),
    storeDocuments: new Gauge({
      name: 'spark_store_documents',
      help: 'Documents per MongoDB collection of the service (read at each scrape)',
      labelNames: ['collection'],
      registers,
      async collect() {
        const stats = await storeStats();
        this.reset();
        for (const c of stats?.collections ?? []) this.set({ collection: c.name }, c.documents);
      },
    }),
    storeDataBytes: new Gauge({
      name: 'spark_store_data_bytes',
      help: "Bytes of documents per MongoDB collection of the service (collStats' size)",
      labelNames: ['collection'],
      registers,
      async collect() {
        const stats = await storeStats();
        this.reset();
        for (const c of stats?.collections ?? []) this.set({ collection: c.name }, c.bytes);
      },
    }),
    storeDiskBytes: new Gauge({
      name: 'spark_store_disk_bytes',
      help: "The database's bytes on disk: dbStats' fileSize (mongo-java-server: its whole data file), else storage and index bytes",
      registers,
      async collect() {
        const bytes = (await storeStats())?.diskBytes;
        if (bytes !== undefined) this.set(bytes);
      },
    }),
    storeOplogEntries: new Gauge({
      name: 'spark_store_oplog_entries',
      help: 'Entries of the oplog (local.oplog.rs) that change streams read from',
      registers,
      async collect() {
        const n = (await storeStats())?.oplogEntries;
        if (n !== undefined) this.set(n);
      },
    }),
  };
}
