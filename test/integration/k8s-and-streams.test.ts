// Single jobs on a k8s cluster (the real adapter against the real API server of testkit/kube, with the Helm
// chart's RBAC and the service's TokenRequest token; the kubelet stand-in runs the pods; artifacts uploaded to
// an S3-compatible server), and the SSE job stream's resumption with Last-Event-ID.
import { CreateBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { helmAvailable, installChartRbac } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startCutProxy, type CutProxy } from '../../testkit/kube/cut-proxy';
import { startKubelet, type Kubelet, type PodPlan } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import { motoAvailable, startMoto, type MotoServer } from '../../testkit/moto';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const ready = k8sAvailable() && helmAvailable() && motoAvailable();
let h: Harness;
let cp: ControlPlaneInfo;
let kubelet: Kubelet;
let moto: MotoServer;
let s3: S3Client;
let NS: string;
/** The service reaches the API server through it, so a test can make it unreachable at the same address. */
let proxy: CutProxy;

/** Drivers of jobs named *long* run until removed; the others end well after 300 ms. */
function plan(pod: V1Pod): PodPlan {
  const args = pod.spec?.containers?.[0]?.args ?? [];
  const lines = [`driver ${pod.metadata?.name} started`];
  return args[args.indexOf('--name') + 1]?.includes('long') ? { hold: lines } : { hold: lines, exitAfterMs: 300 };
}

beforeAll(async () => {
  if (!ready) return;
  moto = await startMoto();
  s3 = new S3Client({
    endpoint: moto.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ACCESS-ID', secretAccessKey: 'SECRET-VALUE' },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'spark' }));
  cp = await sharedControlPlane(inject('testDir'));
  const release = await installChartRbac(cp, 'streams', 'streams-release');
  NS = release.driverNamespace;
  kubelet = await startKubelet({
    cp,
    nodeName: 'node-streams',
    namespaces: [NS],
    dir: `${inject('testDir')}/kubelet-streams`,
    plan,
  });
  proxy = await startCutProxy(cp.url);
  h = await startHarness({ env: { K8S_NAMESPACE: NS } });
  const c = await call(h, 'POST', '/cluster', {
    name: 'real-k8s',
    type: 'k8s',
    url: proxy.url,
    caCert: cp.caCert,
    token: release.token,
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
}, K8S_SETUP_TIMEOUT_MS);
afterAll(async () => {
  await h?.stop();
  await proxy?.stop();
  await kubelet?.stop();
  await moto?.stop();
});

/** The job's objects of a kind on the cluster, as the admin sees them. */
const objectsOf = async (kind: string, jobId: string): Promise<V1Pod[]> => {
  const r = await kubeRequest(
    cp,
    cp.adminToken,
    'GET',
    `/api/v1/namespaces/${NS}/${kind}?labelSelector=${encodeURIComponent(`spark-orchestrator.io/job-id=${jobId}`)}`,
  );
  expect(r.status).toBe(200);
  return r.body.items as V1Pod[];
};

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

describe.skipIf(!ready)('single jobs on a k8s cluster', () => {
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
          clusterName: 'real-k8s',
          executors: '2',
          driverMemory: '1g',
        },
        app,
      ),
    );
    expect(r.status).toBe(200);
    const jobId = r.body.jobId;
    const [pod] = await eventually(
      async () => ((await objectsOf('pods', jobId)).length ? objectsOf('pods', jobId) : undefined),
      30_000,
      50,
    );
    const container = pod.spec!.containers[0];
    const podText = JSON.stringify(pod);
    // Storage credentials reach the pod through a secret, never in clear.
    expect(podText).not.toContain('SECRET-VALUE');
    expect(podText).not.toContain('ACCESS-ID');
    expect(container.args!.join(' ')).toMatch(/spark-submit|--conf/);
    // The main file was uploaded where the pod reads it.
    const main = container.args!.find((a: string) => a.endsWith('/main.py')) as string;
    expect(main).toMatch(new RegExp(`^s3a://spark/artifacts/${jobId}/`));
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'spark', Key: main.slice('s3a://spark/'.length) }));
    expect(head.ContentLength).toBe(Buffer.byteLength(app.pyFiles[0].content));
    const done = await waitState(jobId, 'FINISHED');
    expect(done.appId).toMatch(/^spark-/);
    // The driver pod, its service and its secret are removed once the job finished.
    await eventually(async () => ((await objectsOf('pods', jobId)).length === 0 ? true : undefined), 10_000, 50);
    expect(await objectsOf('services', jobId)).toEqual([]);
    expect(await objectsOf('secrets', jobId)).toEqual([]);
  });

  it('cancels a running pod job: CANCELED and the pod deleted', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form({ name: 'long', language: 'PYTHON', jobClass: 'main', clusterName: 'real-k8s' }, app),
    );
    const jobId = r.body.jobId;
    await waitState(jobId, 'BUSY');
    const logs = await call(h, 'GET', `/job/${jobId}/logs`);
    expect(logs.status).toBe(200);
    expect(logs.body[0]).toMatchObject({ role: 'driver', type: 'pod' });
    expect(logs.body[0].log.length).toBeGreaterThan(0);
    expect((await call(h, 'POST', `/job/${jobId}/cancel`)).status).toBe(200);
    await waitState(jobId, 'CANCELED');
    await eventually(async () => ((await objectsOf('pods', jobId)).length === 0 ? true : undefined), 10_000, 50);
  });

  it('reads UNKNOWN while the API server is unreachable and recovers', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form({ name: 'long-unknown', language: 'PYTHON', jobClass: 'main', clusterName: 'real-k8s' }, app),
    );
    const jobId = r.body.jobId;
    await waitState(jobId, 'BUSY');
    // Cut off, then back (5xx answers instead: broken-k8s-jobs.test.ts, on the fake).
    proxy.cut();
    await waitState(jobId, 'UNKNOWN');
    proxy.mend();
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

describe.skipIf(!ready)('the SSE job stream', () => {
  it('filters by jobIds and resumes after Last-Event-ID without a gap', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form({ name: 'streamed', language: 'PYTHON', jobClass: 'main', clusterName: 'real-k8s' }, app),
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
