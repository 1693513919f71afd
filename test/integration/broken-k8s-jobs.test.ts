// Single jobs on k8s clusters that do not answer or whose drivers do not start: the real stack and k8s adapter
// against a port nothing listens on (which a proxy to the real kube-apiserver of testkit/kube takes over
// mid-test), against the real API server whose kubelet stand-in never starts a container, and against the fake
// Kubernetes API server for the one fault a real server cannot be made to show: answering 5xx for a while.
// Jobs show UNKNOWN with the cause, fail at the launch deadline, cancel at once, and their drivers go once the
// cluster answers.
import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Collections } from '../../lib/mongo';
import { startFakeK8s, type FakeK8s } from '../../testkit/fake-k8s';
import { installChartRbac, helmAvailable, type ChartRelease } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startCutProxy, type CutProxy } from '../../testkit/kube/cut-proxy';
import { startKubelet, type Kubelet } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import type { MotoServer } from '../../testkit/moto';
import { call, eventually, form, startHarness, type Harness } from '../harness';
import { createK8sCluster, freePort, startStorage } from './broken-fixture';

const LAUNCH_DEADLINE_MS = 4000;
let h: Harness;
let healthy: FakeK8s;
/** Started mid-test on the port of the cluster `closed`, which nothing listens on before: the real API server. */
let late: CutProxy | undefined;
let closedPort: number;
let storage: MotoServer;
const real = k8sAvailable() && helmAvailable();
let cp: ControlPlaneInfo;
let release: ChartRelease;
let kubelet: Kubelet | undefined;
/** The real API server's credentials for a cluster document (the chart's service account). */
const realCredentials = () => ({ token: release.token, caCert: cp.caCert });

beforeAll(async () => {
  closedPort = await freePort();
  storage = await startStorage();
  // Pods keep running until a test moves them.
  healthy = await startFakeK8s({ phases: { pendingMs: 50, runMs: null } });
  let namespace = 'default';
  if (real) {
    cp = await sharedControlPlane(inject('testDir'));
    release = await installChartRbac(cp, 'broken', 'broken-rel');
    namespace = release.driverNamespace;
    // Containers never start: pods stay Pending, ContainerCreating.
    kubelet = await startKubelet({
      cp,
      nodeName: 'node-broken',
      namespaces: [namespace],
      dir: `${inject('testDir')}/kubelet-broken`,
      plan: () => ({ waiting: 'ContainerCreating' }),
    });
  }
  h = await startHarness({ env: { LAUNCH_DEADLINE_MS: String(LAUNCH_DEADLINE_MS), K8S_NAMESPACE: namespace } });
  const closed = real
    ? createK8sCluster(h, 'closed', `https://127.0.0.1:${closedPort}`, storage, realCredentials())
    : createK8sCluster(h, 'closed', `http://127.0.0.1:${closedPort}`, storage);
  expect((await closed).status).toBe(200);
  expect((await createK8sCluster(h, 'flaky', healthy.url, storage)).status).toBe(200);
}, K8S_SETUP_TIMEOUT_MS);
afterAll(async () => {
  await h?.stop();
  await storage?.stop();
  await healthy?.stop();
  await late?.stop();
  await kubelet?.stop();
});

const submit = async (clusterName: string, maxRetries = 0) => {
  const r = await call(
    h,
    'POST',
    '/job/submit',
    form(
      { name: `j-${clusterName}`, language: 'PYTHON', jobClass: 'main', clusterName, maxRetries: String(maxRetries) },
      { pyFiles: [{ name: 'main.py', content: 'print(1)\n' }] },
    ),
  );
  expect(r.status).toBe(200);
  return r.body.jobId as string;
};
const job = async (id: string) => (await call(h, 'GET', `/job/${id}`)).body;
const jobWhen = (id: string, ok: (j: Document) => boolean, ms = 30_000) =>
  eventually(async () => {
    const j = await job(id);
    return ok(j) ? j : undefined;
  }, ms);
const podOf = (k: FakeK8s, jobId: string) =>
  [...k.state.pods.values()].find((p) => p.metadata.labels?.['spark-orchestrator.io/job-id'] === jobId);

describe.skipIf(!real)('jobs on a cluster nobody answers for', () => {
  it('are UNKNOWN with the host, the error and since when, then FAILED at the launch deadline, per try', async () => {
    const t0 = Date.now();
    const id = await submit('closed', 1);
    const unknown = await jobWhen(id, (j) => j.state === 'UNKNOWN', 15_000);
    expect(unknown.error).toContain(`127.0.0.1:${closedPort}`);
    expect(unknown.error).toMatch(/ECONNREFUSED/);
    expect(unknown.error).toMatch(/cluster unreachable since \d{4}-\d\d-\d\dT/);
    // maxRetries 1: a second try, which runs out of time too.
    const failed = await jobWhen(id, (j) => j.state === 'FAILED', 4 * LAUNCH_DEADLINE_MS + 30_000);
    expect(failed.attempt).toBe(2);
    expect(failed.error).toContain('did not start within 4 s (LAUNCH_DEADLINE_MS)');
    expect(failed.error).toContain(`127.0.0.1:${closedPort}`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2 * LAUNCH_DEADLINE_MS);
    // No credential reaches the job's record.
    expect(JSON.stringify(failed)).not.toContain(real ? release.token : 'k8s-password');
  });

  it('cancel answers CANCELED at once; the driver is removed once the cluster answers, then DELETE works', async () => {
    const id = await submit('closed');
    await jobWhen(id, (j) => j.state === 'UNKNOWN', 15_000);
    const t0 = Date.now();
    expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
    await jobWhen(id, (j) => j.state === 'CANCELED', 10_000);
    expect(Date.now() - t0).toBeLessThan(8_000);
    // The first removal attempts fail: the job says which driver is left and why.
    const cancelled = await jobWhen(id, (j) => j.cleanup !== undefined, 10_000);
    expect(cancelled.state).toBe('CANCELED');
    expect(cancelled.cleanup).toMatch(new RegExp(`driver job-${id}-1 not removed yet .*127\\.0\\.0\\.1:${closedPort}`));
    // The cluster comes up (the real API server, reached at the address the cluster names): the background
    // removal gets through and the note goes.
    late = await startCutProxy(cp.url, closedPort);
    await jobWhen(id, (j) => j.cleanup === undefined, 60_000);
    expect((await call(h, 'DELETE', `/job/${id}`)).status).toBe(200);
    expect((await call(h, 'GET', `/job/${id}`)).status).toBe(404);
  });
});

describe('jobs on a cluster answering 5xx for a while', () => {
  it('go UNKNOWN with the cause while it fails, back to BUSY when it recovers, and finish', async () => {
    const id = await submit('flaky');
    await jobWhen(id, (j) => j.state === 'BUSY');
    healthy.setUnavailable(500);
    try {
      const unknown = await jobWhen(id, (j) => j.state === 'UNKNOWN');
      expect(unknown.error).toMatch(/HTTP 500/);
      expect(unknown.error).toMatch(/cluster unreachable since/);
    } finally {
      healthy.setUnavailable(false);
    }
    const back = await jobWhen(id, (j) => j.state === 'BUSY');
    expect(back.error).toBeUndefined();
    const pod = podOf(healthy, id)!;
    healthy.setPhase(pod.metadata.namespace, pod.metadata.name, 'Succeeded');
    const done = await jobWhen(id, (j) => j.state === 'FINISHED');
    expect(done.error).toBeUndefined();
    expect(done.cleanup).toBeUndefined();
  });

  it('stop while it fails: FINISHED at once, the pod deleted when it recovers', async () => {
    const id = await submit('flaky');
    await jobWhen(id, (j) => j.state === 'BUSY');
    healthy.setUnavailable(502);
    try {
      await jobWhen(id, (j) => j.state === 'UNKNOWN');
      const t0 = Date.now();
      expect((await call(h, 'POST', `/job/${id}/stop`)).status).toBe(200);
      const stopped = await jobWhen(id, (j) => j.state === 'FINISHED', 10_000);
      expect(Date.now() - t0).toBeLessThan(8_000);
      expect(stopped.error).toBeUndefined();
    } finally {
      healthy.setUnavailable(false);
    }
    await eventually(async () => podOf(healthy, id) === undefined, 60_000);
  });

  it('cancel while it fails: CANCELED at once; DELETE works at once; the pod goes when it recovers', async () => {
    const id = await submit('flaky');
    await jobWhen(id, (j) => j.state === 'BUSY');
    healthy.setUnavailable(503);
    try {
      await jobWhen(id, (j) => j.state === 'UNKNOWN');
      expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
      await jobWhen(id, (j) => j.state === 'CANCELED', 10_000);
      const cancelled = await jobWhen(id, (j) => j.cleanup !== undefined, 10_000);
      expect(cancelled.state).toBe('CANCELED');
      expect(cancelled.cleanup).toMatch(/HTTP 503/);
      expect(podOf(healthy, id)).toBeDefined();
      // Deleting does not wait for the cluster: the job's workflow goes on removing its driver.
      expect((await call(h, 'DELETE', `/job/${id}`)).status).toBe(200);
      expect((await call(h, 'GET', `/job/${id}`)).status).toBe(404);
    } finally {
      healthy.setUnavailable(false);
    }
    await eventually(async () => podOf(healthy, id) === undefined, 60_000);
    // The removal's end writes nothing: the deleted job stays deleted.
    await new Promise((r) => setTimeout(r, 2000));
    expect(await h.store.col(Collections.jobs).findOne({ _id: id } as Document)).toBeNull();
  });
});

describe('a schedule on a cluster nobody answers for', () => {
  it('does not hold back its next run: the stuck run fails at the launch deadline and the next one starts', async () => {
    // A port of its own: the first cluster's port answers by now.
    const port = await freePort();
    expect((await createK8sCluster(h, 'closed-too', `http://127.0.0.1:${port}`, storage)).status).toBe(200);
    const r = await call(
      h,
      'POST',
      '/schedule',
      form(
        { name: 'stuck', cron: '@every 2s', language: 'PYTHON', jobClass: 'main', clusterName: 'closed-too' },
        { pyFiles: [{ name: 'main.py', content: 'print(1)\n' }] },
      ),
    );
    expect(r.status).toBe(200);
    const scheduleId = r.body.scheduleId as string;
    try {
      const runs = await eventually(
        async () => {
          const list = (await h.store
            .col(Collections.jobs)
            .find({ scheduleId })
            .sort({ submitTime: 1 })
            .toArray()) as Document[];
          return list.length >= 2 && list[0].state === 'FAILED' ? list : undefined;
        },
        4 * LAUNCH_DEADLINE_MS + 30_000,
      );
      expect(runs[0].error).toContain('did not start within 4 s');
      // BUFFER_ONE: the next run started once the first one ended, not before.
      expect(runs[1].submitTime).toBeGreaterThanOrEqual(runs[0].endTime - 1000);
    } finally {
      expect((await call(h, 'DELETE', `/schedule/${scheduleId}`)).status).toBe(200);
    }
  });
});

describe.skipIf(!real)('a driver that never leaves Pending', () => {
  it('fails its try at the launch deadline, and its pod is removed', async () => {
    expect((await createK8sCluster(h, 'pending', cp.url, storage, realCredentials())).status).toBe(200);
    const id = await submit('pending');
    const ns = release.driverNamespace;
    const pods = async () =>
      (
        await kubeRequest(
          cp,
          cp.adminToken,
          'GET',
          `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(`spark-orchestrator.io/job-id=${id}`)}`,
        )
      ).body.items as { status?: { containerStatuses?: { state?: { waiting?: { reason?: string } } }[] } }[];
    // Bound to the node, its container waiting.
    await eventually(
      async () => (await pods())[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating',
      20_000,
    );
    expect((await jobWhen(id, (j) => j.state === 'STARTING')).error).toBeUndefined();
    const failed = await jobWhen(id, (j) => j.state === 'FAILED', LAUNCH_DEADLINE_MS + 20_000);
    expect(failed.error).toContain('did not start within 4 s (LAUNCH_DEADLINE_MS)');
    await eventually(async () => (await pods()).length === 0, 30_000);
  });
});
