// The API's Prometheus metrics against real MongoDB change feeds: HTTP latency by route template, jobs by
// state counted from the read model, and executions, scheduled runs and SQL statements observed once each
// from the feeds (however often their documents change), and the store's size.
import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Collections } from '../../lib/mongo';
import { metricSum, scrape } from '../../testkit/metrics';
import { call, eventually, startHarness, type Harness } from '../harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(async () => {
  await h?.stop();
});

const origin = () => h.url.replace(/\/api\/v1$/, '');

describe('GET /metrics', () => {
  it('times requests by route template and status, never by the id in the path', async () => {
    expect((await call(h, 'GET', '/job/no-such-job')).status).toBe(404);
    expect((await call(h, 'GET', '/job/another-missing')).status).toBe(404);
    const m = await scrape(h.url);
    const labels = { method: 'GET', route: '/api/v1/job/:jobId', status: '404' };
    expect(metricSum(m, 'http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(2);
    expect(m.some((s) => s.labels.route?.includes('no-such-job'))).toBe(false);
    expect(metricSum(m, 'spark_orchestrator_api_process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('answers other methods with 405, Allow and a message', async () => {
    const res = await fetch(`${origin()}/metrics`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(((await res.json()) as { message: string }).message).toMatch(/GET/);
  });

  it('counts jobs by state, cluster and type from the read model', async () => {
    const jobs = h.store.col(Collections.jobs);
    const base = { jobType: 'SINGLE', clusterName: 'metrics-cluster', submitTime: Date.now() };
    await jobs.insertMany([
      { ...base, jobId: 'm-1', state: 'FINISHED' },
      { ...base, jobId: 'm-2', state: 'FINISHED' },
      { ...base, jobId: 'm-3', state: 'FAILED' },
    ]);
    const m = await scrape(h.url);
    expect(metricSum(m, 'spark_jobs', { cluster: 'metrics-cluster', state: 'FINISHED', type: 'SINGLE' })).toBe(2);
    expect(metricSum(m, 'spark_jobs', { cluster: 'metrics-cluster', state: 'FAILED' })).toBe(1);
  });

  it('observes a finished execution, a scheduled run and an SQL statement once each', async () => {
    await scrape(h.url); // the first scrape starts observing the feeds
    const now = Date.now();
    const results = h.store.col(Collections.results);
    await results.insertOne({ jobInstanceId: 'e-1', groupId: 'g-metrics', startTime: now, jobConfig: {} });
    await results.updateOne({ jobInstanceId: 'e-1' }, { $set: { endTime: now + 250, result: '42' } });
    await results.updateOne({ jobInstanceId: 'e-1' }, { $set: { result: '42 again' } });
    await results.insertOne({
      jobInstanceId: 'e-2',
      groupId: 'g-metrics',
      startTime: now,
      endTime: now + 10,
      jobConfig: {},
      error: { message: 'boom', stackTrace: '' },
    });
    const nominal = new Date(now - 1500);
    await h.store.col(Collections.jobs).insertOne({
      jobId: `sched-s-metrics-${nominal.toISOString().replace(/\.\d+Z$/, 'Z')}`,
      scheduleId: 's-metrics',
      jobType: 'SINGLE',
      clusterName: 'metrics-cluster',
      state: 'SUBMITTED',
      submitTime: now,
    });
    const history = h.store.col(Collections.sqlHistory);
    await history.insertOne({ id: 'q-1', engine: 'SPARK_SQL', state: 'RUNNING', creationTime: now, startTime: now });
    await history.updateOne({ id: 'q-1' }, { $set: { state: 'FINISHED', completionTime: now + 40 } });

    await eventually(async () => {
      const m = await scrape(h.url);
      return metricSum(m, 'spark_sql_statement_duration_seconds_count', { engine: 'SPARK_SQL' }) === 1 &&
        metricSum(m, 'spark_group_executions_total', { group: 'g-metrics' }) === 2 &&
        metricSum(m, 'spark_schedule_fire_delay_seconds_count', { schedule: 's-metrics' }) === 1
        ? true
        : undefined;
    }, 20_000);
    const m = await scrape(h.url);
    expect(metricSum(m, 'spark_group_executions_total', { group: 'g-metrics', outcome: 'success' })).toBe(1);
    expect(metricSum(m, 'spark_group_executions_total', { group: 'g-metrics', outcome: 'error' })).toBe(1);
    expect(metricSum(m, 'spark_group_execution_duration_seconds_sum', { group: 'g-metrics' })).toBeCloseTo(0.26, 5);
    expect(metricSum(m, 'spark_schedule_fire_delay_seconds_sum', { schedule: 's-metrics' })).toBeGreaterThan(0.9);
    expect(metricSum(m, 'spark_sql_statements_total', { engine: 'SPARK_SQL', state: 'FINISHED' })).toBe(1);
    expect(metricSum(m, 'spark_sql_statement_duration_seconds_sum', { engine: 'SPARK_SQL' })).toBeCloseTo(0.04, 5);
  });

  it('counts stream subscribers by feed', async () => {
    const ctl = new AbortController();
    const res = await fetch(`${h.url}/job/updates`, { signal: ctl.signal });
    expect(res.status).toBe(200);
    try {
      await eventually(async () => {
        const m = await scrape(h.url);
        return metricSum(m, 'spark_stream_subscribers', { feed: 'jobs' }) >= 1 ? true : undefined;
      }, 10_000);
    } finally {
      ctl.abort();
    }
    await eventually(async () => {
      const m = await scrape(h.url);
      return metricSum(m, 'spark_stream_subscribers', { feed: 'jobs' }) === 0 ? true : undefined;
    }, 10_000);
  });

  it("reports the store's size: documents and bytes per collection, the data file's bytes, the oplog's entries", async () => {
    const notebooks = h.store.col(Collections.notebooks);
    await notebooks.insertMany(Array.from({ length: 50 }, (_, i) => ({ name: `nb-${i}`, body: 'x'.repeat(1000) })));
    const m = await scrape(h.url);
    expect(metricSum(m, 'spark_store_documents', { collection: 'sqlNotebooks' })).toBe(50);
    expect(metricSum(m, 'spark_store_data_bytes', { collection: 'sqlNotebooks' })).toBeGreaterThan(50_000);
    for (const name of [Collections.clusters, Collections.jobs, Collections.audit])
      expect(metricSum(m, 'spark_store_documents', { collection: name })).toBe(
        await h.store.col(name).countDocuments(),
      );
    // The tests' MongoDB-protocol server keeps its data in one file: the gauge is that file's size.
    const file = statSync(path.join(inject('testDir'), 'data', 'mongo.mv')).size;
    const disk = metricSum(m, 'spark_store_disk_bytes');
    expect(disk).toBeGreaterThan(file / 2);
    expect(disk).toBeLessThan(file * 2);
    expect(metricSum(m, 'spark_store_oplog_entries')).toBeGreaterThanOrEqual(50);
    // Read again at the next scrape.
    await notebooks.deleteMany({ name: /^nb-/ });
    expect(metricSum(await scrape(h.url), 'spark_store_documents', { collection: 'sqlNotebooks' })).toBe(0);
  });
});
