// Single jobs on a k8s cluster (the real adapter against the fake API server, artifacts uploaded to an
// S3-compatible server), and the SSE job stream's resumption with Last-Event-ID.
import { CreateBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeK8s, type FakeK8s } from '../../testkit/fake-k8s';
import { startMoto, type MotoServer } from '../../testkit/moto';
import { call, eventually, form, startHarness, type Harness } from '../harness';

let h: Harness;
let k8s: FakeK8s;
let moto: MotoServer;
let s3: S3Client;

beforeAll(async () => {
  moto = await startMoto();
  s3 = new S3Client({
    endpoint: moto.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ACCESS-ID', secretAccessKey: 'SECRET-VALUE' },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'spark' }));
  k8s = await startFakeK8s({
    phases: { pendingMs: 50, runMs: (pod) => (JSON.stringify(pod.spec).includes('long') ? null : 300) },
  });
  h = await startHarness();
  const c = await call(h, 'POST', '/cluster', {
    name: 'fake-k8s',
    type: 'k8s',
    url: k8s.url,
    username: 'admin',
    password: 'k8s-password',
    sparkStorage: 'main',
    storages: {
      main: {
        sparkBucket: 'spark',
        endpoint: moto.endpoint,
        accessKey: 'ACCESS-ID',
        secretKey: 'SECRET-VALUE',
      },
    },
  });
  expect(c.status).toBe(200);
});
afterAll(async () => {
  await h?.stop();
  await k8s?.stop();
  await moto?.stop();
});

const app = { pyFiles: [{ name: 'main.py', content: 'print("hello from a pod")\n' }] };
const waitState = (jobId: string, state: string) =>
  eventually(
    async () => {
      const j = (await call(h, 'GET', `/job/${jobId}`)).body;
      return j.state === state ? j : undefined;
    },
    30_000,
    100,
  );

describe('single jobs on a k8s cluster', () => {
  it('runs a job as a driver pod with its service, reads pod logs, and cleans up when it finishes', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        {
          name: 'pod-job',
          language: 'PYTHON',
          jobClass: 'main',
          clusterName: 'fake-k8s',
          executors: '2',
          driverMemory: '1g',
        },
        app,
      ),
    );
    expect(r.status).toBe(200);
    const jobId = r.body.jobId;
    await eventually(
      async () =>
        [...k8s.state.pods.values()].some((p) => p.metadata.labels?.['spark-orchestrator.io/job-id'] === jobId),
      30_000,
      50,
    );
    const pod = [...k8s.state.pods.values()].find(
      (p) => p.metadata.labels?.['spark-orchestrator.io/job-id'] === jobId,
    )!;
    const container = pod.spec.containers[0];
    const podText = JSON.stringify(pod);
    // Storage credentials reach the pod through a secret, never in clear.
    expect(podText).not.toContain('SECRET-VALUE');
    expect(podText).not.toContain('ACCESS-ID');
    expect(container.args.join(' ')).toMatch(/spark-submit|--conf/);
    // The main file was uploaded where the pod reads it.
    const main = container.args.find((a: string) => a.endsWith('/main.py')) as string;
    expect(main).toMatch(new RegExp(`^s3a://spark/artifacts/${jobId}/`));
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'spark', Key: main.slice('s3a://spark/'.length) }));
    expect(head.ContentLength).toBe(Buffer.byteLength(app.pyFiles[0].content));
    const done = await waitState(jobId, 'FINISHED');
    expect(done.appId).toMatch(/^spark-/);
    // The driver pod and its service are removed once the job finished.
    await eventually(
      async () =>
        ![...k8s.state.pods.values()].some((p) => p.metadata.labels?.['spark-orchestrator.io/job-id'] === jobId),
      10_000,
      50,
    );
    expect([...k8s.state.services.keys()].some((k) => k.includes(jobId.slice(0, 8)))).toBe(false);
  });

  it('cancels a running pod job: CANCELED and the pod deleted', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form({ name: 'long', language: 'PYTHON', jobClass: 'main', clusterName: 'fake-k8s' }, app),
    );
    const jobId = r.body.jobId;
    await waitState(jobId, 'BUSY');
    const logs = await call(h, 'GET', `/job/${jobId}/logs`);
    expect(logs.status).toBe(200);
    expect(logs.body[0]).toMatchObject({ role: 'driver', type: 'pod' });
    expect(logs.body[0].log.length).toBeGreaterThan(0);
    expect((await call(h, 'POST', `/job/${jobId}/cancel`)).status).toBe(200);
    await waitState(jobId, 'CANCELED');
    await eventually(
      async () =>
        ![...k8s.state.pods.values()].some((p) => p.metadata.labels?.['spark-orchestrator.io/job-id'] === jobId),
      10_000,
      50,
    );
  });

  it('reads UNKNOWN while the API server is unreachable and recovers', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form({ name: 'long-unknown', language: 'PYTHON', jobClass: 'main', clusterName: 'fake-k8s' }, app),
    );
    const jobId = r.body.jobId;
    await waitState(jobId, 'BUSY');
    k8s.setUnavailable(503);
    await waitState(jobId, 'UNKNOWN');
    k8s.setUnavailable(false);
    await waitState(jobId, 'BUSY');
    expect((await call(h, 'POST', `/job/${jobId}/stop`)).status).toBe(200);
    await waitState(jobId, 'FINISHED');
  });
});

/** Reads an SSE response until `stop` says so; returns the events seen. */
async function readSse(
  url: string,
  headers: Record<string, string>,
  stop: (events: { id: string; data: any }[]) => boolean,
  timeoutMs = 30_000,
) {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  const events: { id: string; data: any }[] = [];
  try {
    const res = await fetch(url, { headers, signal: ctrl.signal });
    const reader = res.body!.getReader();
    let buf = '';
    while (!stop(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += new TextDecoder().decode(value);
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (id && data) events.push({ id, data: JSON.parse(data) });
      }
    }
  } finally {
    clearTimeout(timer);
    ctrl.abort();
  }
  return events;
}

describe('the SSE job stream', () => {
  it('filters by jobIds and resumes after Last-Event-ID without a gap', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form({ name: 'streamed', language: 'PYTHON', jobClass: 'main', clusterName: 'fake-k8s' }, app),
    );
    const jobId = r.body.jobId;
    // A first connection sees the job's first change, then drops.
    const first = await readSse(`${h.url}/job/updates?jobIds=${jobId}`, {}, (ev) => ev.length >= 1);
    expect(first[0].data.jobId).toBe(jobId);
    await waitState(jobId, 'FINISHED');
    // Reconnecting with the last id it saw delivers everything after it, up to FINISHED.
    const rest = await readSse(`${h.url}/job/updates?jobIds=${jobId}`, { 'Last-Event-ID': first[0].id }, (ev) =>
      ev.some((e) => e.data.state === 'FINISHED'),
    );
    const states = [first[0].data.state, ...rest.map((e) => e.data.state)];
    expect(states[states.length - 1]).toBe('FINISHED');
    expect(rest.every((e) => e.data.jobId === jobId)).toBe(true);
    expect(rest.map((e) => e.id)).not.toContain(first[0].id);
    const bad = await fetch(`${h.url}/job/updates`, { headers: { 'Last-Event-ID': '%%%' } });
    expect(bad.status).toBe(400);
    expect((await call(h, 'GET', '/job/updates?tags=novalue')).status).toBe(409);
  });
});
