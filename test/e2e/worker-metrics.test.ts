// The worker process's Prometheus endpoint (WORKER_METRICS_ADDRESS): the Temporal SDK's worker metrics and
// the cluster adapter's call latencies by adapter and operation, after a real PySpark job on the local cluster.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { metricSum, parseMetrics } from '../../testkit/metrics';
import { freePort } from '../../testkit/servers';
import { quietTemporal, startStack, type Stack } from '../../testkit/stack';
import { call, eventually, form } from '../harness';

let s: Stack;
let metricsUrl: string;

beforeAll(async () => {
  quietTemporal();
  const id = randomUUID().slice(0, 8);
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  s = await startStack({
    temporalAddress: inject('temporalAddress'),
    mongoUrl: inject('mongoUrl'),
    dir: path.join(inject('testDir'), id),
    id,
    prefix: 'test',
    env: { WATCH_INTERVAL_MS: '200', LOG_LEVEL: 'warn', WORKER_METRICS_ADDRESS: `127.0.0.1:${port}` },
    worker: 'process',
  });
});
afterAll(async () => {
  await s?.stop();
});

describe('worker metrics', () => {
  it('serves the SDK worker metrics and the adapter call latencies after a job', async () => {
    const r = await call(
      s,
      'POST',
      '/job/submit',
      form(
        { name: 'metrics-job', language: 'PYTHON', jobClass: 'main', driverMemory: '512m' },
        { pyFiles: [{ name: 'main.py', content: 'print("hello")\n' }] },
      ),
    );
    expect(r.status).toBe(200);
    await eventually(
      async () => ((await call(s, 'GET', `/job/${r.body.jobId}`)).body.state === 'FINISHED' ? true : undefined),
      180_000,
      500,
    );
    const m = await eventually(async () => {
      const res = await fetch(metricsUrl);
      const samples = parseMetrics(await res.text());
      return metricSum(samples, 'spark_adapter_call_duration_count', { adapter: 'local', operation: 'status' }) > 0
        ? samples
        : undefined;
    }, 30_000);
    expect(
      metricSum(m, 'spark_adapter_call_duration_count', { adapter: 'local', operation: 'launch', outcome: 'ok' }),
    ).toBe(1);
    expect(m.some((x) => x.name.startsWith('temporal_') && x.name.includes('workflow_task'))).toBe(true);
    expect(m.some((x) => x.name.startsWith('temporal_activity_execution'))).toBe(true);
  });
});
