// The k8s path against a real kube-apiserver 1.34 with etcd and kube-controller-manager (testkit/kube, built
// by scripts/setup-k8s.sh): the Helm chart's RBAC rendered by Helm and applied as is, the service holding
// only its account's TokenRequest token, artifacts in moto, and a kubelet stand-in that binds and runs the
// pods and serves their logs to the API server. Proves the chart's rights are enough for everything the
// adapter does, that a driver's objects are owned by its pod, that logs of a container that has not
// started read as "no log yet", that cancel, stop and delete leave nothing behind, and that a token
// without rights fails the job with the API server's words.
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { k8sNames } from '../../activities/adapters/k8s/names';
import { sqlEngineDriverId } from '../../domain/sql-engine';
import type { ChartRelease } from '../../testkit/kube/chart-rbac';
import {
  createNamespace,
  kubeRequest,
  serviceAccountToken,
  type ControlPlaneInfo,
} from '../../testkit/kube/control-plane';
import type { PodPlan } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS } from '../../testkit/kube/shared';
import type { MotoServer } from '../../testkit/moto';
import { call, eventually, form, type Harness } from '../harness';
import { realK8s, realK8sCluster, realK8sReady } from './real-k8s-fixture';
import { sparkSpec } from '../../testkit/spark-spec';

/** The release's namespace; drivers go to the chart's drivers' namespace (NS). */
const RELEASE_NS = 'real-api';
const RELEASE = 'realapi';
let NS: string;
const ready = realK8sReady();

let cp: ControlPlaneInfo;
let release: ChartRelease;
let storage: MotoServer;
let h: Harness;

/** What the kubelet does with a driver pod: by the job's name (spark-submit's --name). */
function plan(pod: V1Pod): PodPlan {
  const args = pod.spec?.containers?.[0]?.args ?? [];
  const name = args[args.indexOf('--name') + 1] ?? '';
  if (name === 'never-starts') return { waiting: 'ContainerCreating' };
  if (name === 'oom') return { hold: ['allocating'], exitAfterMs: 300, exitCode: 137, reason: 'OOMKilled' };
  return { hold: [`driver of ${pod.metadata?.name} running`, 'second line'] };
}

const k8s = realK8s({ release: RELEASE, releaseNs: RELEASE_NS, plan });

const cluster = (name: string, token: string) => realK8sCluster(cp, storage, name, { caCert: cp.caCert, token });

beforeAll(async () => {
  ({ cp, release, storage, h, ns: NS } = await k8s.start(inject('testDir')));
  expect((await call(h, 'POST', '/cluster', cluster('real', release.token))).status).toBe(200);
}, K8S_SETUP_TIMEOUT_MS);
afterAll(() => k8s.stop());

const admin = (method: string, p: string, body?: unknown) => kubeRequest(cp, cp.adminToken, method, p, body);
type Owned = {
  metadata: { name: string; uid: string; ownerReferences?: { kind: string; name: string; uid: string }[] };
};
/** Objects of a kind labelled with the job (or `label=value`). */
const list = async (kind: string, jobId: string): Promise<Owned[]> => {
  const group = kind === 'networkpolicies' ? '/apis/networking.k8s.io/v1' : '/api/v1';
  const selector = jobId.includes('=') ? jobId : `spark-orchestrator.io/job-id=${jobId}`;
  const r = await admin('GET', `${group}/namespaces/${NS}/${kind}?labelSelector=${encodeURIComponent(selector)}`);
  expect(r.status).toBe(200);
  return r.body.items as Owned[];
};
const DEPENDENTS = ['services', 'secrets', 'configmaps', 'networkpolicies'];
const leftOf = async (jobId: string) => {
  const kinds = ['pods', ...DEPENDENTS];
  const all = await Promise.all(kinds.map(async (k) => (await list(k, jobId)).map((o) => `${k}/${o.metadata.name}`)));
  return all.flat();
};

const submit = async (name: string, clusterName = 'real') => {
  const r = await call(
    h,
    'POST',
    '/job/submit',
    form(
      { name, language: 'PYTHON', jobClass: 'main', clusterName },
      { pyFiles: [{ name: 'main.py', content: 'print(1)\n' }] },
    ),
  );
  expect(r.status).toBe(200);
  return r.body.jobId as string;
};
const jobWhen = (id: string, ok: (j: Record<string, any>) => boolean, ms = 60_000) =>
  eventually(async () => {
    const j = (await call(h, 'GET', `/job/${id}`)).body;
    return ok(j) ? j : undefined;
  }, ms);

describe.skipIf(!ready)('the k8s adapter against a real API server with the chart RBAC', () => {
  it('runs a driver with its service, NetworkPolicy and secret; its log reads through the API server', async () => {
    const id = await submit('holds');
    await jobWhen(id, (j) => j.state === 'BUSY' || j.state === 'RUNNING');
    const left = await leftOf(id);
    expect(left.filter((x) => x.startsWith('pods/'))).toHaveLength(1);
    expect(left.some((x) => x.startsWith('services/'))).toBe(true);
    expect(left.some((x) => x.startsWith('networkpolicies/'))).toBe(true);
    expect(left.some((x) => x.startsWith('secrets/'))).toBe(true);
    const logs = await eventually(async () => {
      const r = await call(h, 'GET', `/job/${id}/logs`);
      return r.status === 200 && r.body[0]?.log?.length ? r.body : undefined;
    }, 20_000);
    expect(logs[0].role).toBe('driver');
    expect(logs[0].log[0]).toMatch(/^driver of .* running$/);
    expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
    await eventually(async () => ((await leftOf(id)).length === 0 ? true : undefined), 30_000);
    // Read after removal: the copy remove saved.
    const saved = await call(h, 'GET', `/job/${id}/logs`);
    expect(saved.status).toBe(200);
    expect(saved.body[0].log).toContain('second line');
  });

  it('a driver whose container never started: its log is empty (200), and cancel leaves nothing behind', async () => {
    const id = await submit('never-starts');
    await eventually(async () => ((await list('pods', id))[0] ? true : undefined), 30_000);
    // Bound to the node, container waiting: the API server proxies to the kubelet, which answers 400.
    await eventually(async () => {
      const r = await admin('GET', `/api/v1/namespaces/${NS}/pods/${(await list('pods', id))[0].metadata.name}`);
      return r.body.status?.containerStatuses?.[0]?.state?.waiting ? true : undefined;
    }, 30_000);
    const r = await call(h, 'GET', `/job/${id}/logs`);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(1);
    expect(r.body[0].log).toEqual([]);
    expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
    expect((await jobWhen(id, (j) => j.state === 'CANCELED')).state).toBe('CANCELED');
    await eventually(async () => ((await leftOf(id)).length === 0 ? true : undefined), 30_000);
    expect((await jobWhen(id, (j) => !j.cleanup, 30_000)).cleanup).toBeUndefined();
    expect((await call(h, 'DELETE', `/job/${id}`)).status).toBe(200);
  });

  it('a pod not bound to any node yet (no room): logs answer 200 with none, stop leaves nothing', async () => {
    // More memory than the node has: the kubelet leaves it unbound, PodScheduled=False.
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        { name: 'too-big', language: 'PYTHON', jobClass: 'main', clusterName: 'real', driverMemory: '64g' },
        { pyFiles: [{ name: 'main.py', content: 'print(1)\n' }] },
      ),
    );
    expect(r.status).toBe(200);
    const id = r.body.jobId as string;
    await eventually(async () => {
      const [pod] = await list('pods', id);
      const s = pod && (await admin('GET', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`)).body;
      return s?.status?.conditions?.some((c: { reason?: string }) => c.reason === 'Unschedulable') && !s.spec.nodeName;
    }, 30_000);
    expect((await call(h, 'GET', `/job/${id}`)).body.state).toBe('STARTING');
    const logs = await call(h, 'GET', `/job/${id}/logs`);
    expect(logs.status).toBe(200);
    expect(logs.body[0].log).toEqual([]);
    expect((await call(h, 'POST', `/job/${id}/stop`)).status).toBe(200);
    await eventually(async () => ((await leftOf(id)).length === 0 ? true : undefined), 30_000);
  });

  it("a driver's objects are owned by its pod: deleting the pod by hand, the garbage collector takes them", async () => {
    const id = await submit('owned');
    await jobWhen(id, (j) => j.state === 'BUSY' || j.state === 'RUNNING');
    const [pod] = await list('pods', id);
    const dependents = (await Promise.all(DEPENDENTS.map((k) => list(k, id)))).flat();
    // Service, secret and NetworkPolicy (no config map for a Spark driver).
    expect(dependents).toHaveLength(3);
    for (const d of dependents)
      expect(d.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid }),
      ]);
    // Someone else deletes the pod (kubectl, an eviction): its objects go with it.
    expect((await admin('DELETE', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`)).status).toBe(200);
    await eventually(async () => ((await leftOf(id)).length === 0 ? true : undefined), 60_000);
    // The job learns its driver is gone.
    expect((await jobWhen(id, (j) => j.state === 'FAILED')).error).toBeTruthy();
  });

  it('deleting a group leaves none of its runner pods or their objects', async () => {
    const r = await call(
      h,
      'POST',
      '/group',
      form({ name: 'runners', kind: 'CODE', language: 'PYTHON', scale: '2', clusterName: 'real' }),
    );
    expect(r.status).toBe(200);
    const groupId = r.body.groupId as string;
    const sel = `spark-orchestrator.io/group-id=${groupId}`;
    await eventually(async () => ((await list('pods', sel)).length === 2 ? true : undefined), 60_000);
    const jobs = (await call(h, 'GET', `/group/${groupId}?jobStates=SUBMITTED,STARTING,READY,BUSY,UNKNOWN`)).body
      .jobs as { jobId: string }[];
    // An instance's log reads through the API server too.
    const logs = await eventually(async () => {
      const x = await call(h, 'GET', `/job/${jobs[0].jobId}/logs`);
      return x.status === 200 && x.body[0]?.log?.length ? x.body : undefined;
    }, 30_000);
    expect(logs[0].role).toBe('driver');
    expect((await call(h, 'DELETE', `/group/${groupId}`)).status).toBe(200);
    await eventually(async () => ((await leftOf(sel)).length === 0 ? true : undefined), 60_000);
  });

  it("a driver the node kills for memory: FAILED with the container's reason and exit code", async () => {
    const id = await submit('oom');
    const failed = await jobWhen(id, (j) => j.state === 'FAILED');
    expect(failed.error).toMatch(/OOMKilled/);
    expect(failed.error).toMatch(/137/);
    await eventually(async () => ((await leftOf(id)).length === 0 ? true : undefined), 30_000);
  });

  it('a TRINO SQL engine: its ConfigMap and service are accepted with the chart RBAC, owned by its pod, gone with it', async () => {
    const adapter = createK8sAdapter({
      cluster: { name: 'real', url: cp.url, caCert: cp.caCert, token: release.token },
      config: { K8S_NAMESPACE: NS, ARTIFACT_DIR: '/srv/artifacts', K8S_SPARK_IMAGE: 'apache/spark:3.5.7-python3' },
    });
    const driverId = sqlEngineDriverId('real', 'TRINO', 1);
    const n = k8sNames(driverId);
    await adapter.launch({
      driverId,
      role: 'sql-engine',
      engine: { type: 'TRINO', stateKey: 'real' },
      env: {},
      labels: {},
      spark: sparkSpec({ name: 'TRINO engine', language: 'SCALA', clusterName: 'real' }),
    });
    const get = (p: string) => admin('GET', `/api/v1/namespaces/${NS}/${p}`);
    const pod = (await get(`pods/${n.pod}`)).body;
    for (const p of [`configmaps/${n.configMap}`, `services/${n.engineService}`]) {
      const o = await get(p);
      expect(o.status, p).toBe(200);
      expect(o.body.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Pod', uid: pod.metadata.uid }),
      ]);
    }
    await eventually(async () => ((await adapter.status(driverId)).phase === 'RUNNING' ? true : undefined), 30_000);
    expect((await adapter.status(driverId)).endpoint).toEqual({ host: `${n.engineService}.${NS}.svc`, port: 8080 });
    const [entry] = await adapter.logs(driverId, { from: 0, size: 10 });
    expect(entry).toMatchObject({ name: n.pod, role: 'driver', state: 'Running' });
    await adapter.remove(driverId);
    await eventually(async () => {
      const left = await Promise.all(
        [`pods/${n.pod}`, `configmaps/${n.configMap}`, `services/${n.engineService}`].map(
          async (p) => (await get(p)).status,
        ),
      );
      return left.every((s) => s === 404) ? true : undefined;
    }, 30_000);
  });

  it("POST /cluster/namespace: refused with the API server's words under the chart's rights, created with rights", async () => {
    const refused = await call(h, 'POST', '/cluster/namespace', { name: 'team-a', clusterName: 'real' });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/forbidden/i);
    expect(JSON.stringify(refused.body)).not.toContain(release.token);
    expect((await call(h, 'POST', '/cluster', cluster('admin', cp.adminToken))).status).toBe(200);
    expect((await call(h, 'POST', '/cluster/namespace', { name: 'team-a', clusterName: 'admin' })).status).toBe(200);
    const ns = await admin('GET', '/api/v1/namespaces/team-a');
    expect(ns.status).toBe(200);
    expect(ns.body.metadata.labels['app.kubernetes.io/managed-by']).toBe('spark-orchestrator');
  });

  it('a token without rights: the job FAILS with the API server\'s "forbidden"', async () => {
    await createNamespace(cp, `${NS}-none`);
    const token = await serviceAccountToken(cp, `${NS}-none`, 'default');
    expect((await call(h, 'POST', '/cluster', cluster('no-rights', token))).status).toBe(200);
    const id = await submit('no-rights', 'no-rights');
    const failed = await jobWhen(id, (j) => j.state === 'FAILED');
    expect(failed.error).toMatch(/forbidden/i);
    expect(failed.error).toContain(`system:serviceaccount:${NS}-none:default`);
    expect(JSON.stringify(failed)).not.toContain(token);
  });

  it("logs of a job, and of a group's instance, on a cluster that does not answer: 503 with the cause", async () => {
    const id = await submit('holds-2');
    await jobWhen(id, (j) => j.state === 'BUSY' || j.state === 'RUNNING');
    const g = await call(
      h,
      'POST',
      '/group',
      form({ name: 'unreachable', kind: 'CODE', language: 'PYTHON', scale: '1', clusterName: 'real' }),
    );
    expect(g.status).toBe(200);
    const instance = await eventually(async () => {
      const jobs = (await call(h, 'GET', `/group/${g.body.groupId}?jobStates=SUBMITTED,STARTING,READY,BUSY,UNKNOWN`))
        .body.jobs as { jobId: string }[];
      return jobs?.[0]?.jobId;
    }, 30_000);
    // Same cluster document, an address nothing listens on.
    const c = cluster('real', release.token);
    expect(
      (await call(h, 'PUT', `/cluster/${await clusterId('real')}`, { ...c, url: 'https://127.0.0.1:9' })).status,
    ).toBe(200);
    try {
      const r = await eventually(async () => {
        const x = await call(h, 'GET', `/job/${id}/logs`);
        return x.status !== 200 ? x : undefined;
      }, 20_000);
      expect(r.status).toBe(503);
      expect(r.body.message).toMatch(/127\.0\.0\.1:9/);
      expect(JSON.stringify(r.body)).not.toContain(release.token);
      const ir = await call(h, 'GET', `/job/${instance}/logs`);
      expect(ir.status).toBe(503);
      expect(ir.body.message).toMatch(/unreachable.*127\.0\.0\.1:9/);
    } finally {
      expect((await call(h, 'PUT', `/cluster/${await clusterId('real')}`, c)).status).toBe(200);
    }
    expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
    expect((await call(h, 'DELETE', `/group/${g.body.groupId}`)).status).toBe(200);
    await eventually(async () => ((await leftOf(id)).length === 0 ? true : undefined), 60_000);
    await eventually(
      async () => ((await leftOf(`spark-orchestrator.io/group-id=${g.body.groupId}`)).length === 0 ? true : undefined),
      60_000,
    );
  });
});

async function clusterId(name: string): Promise<string> {
  const r = await call(h, 'GET', `/cluster?search=${name}&size=50`);
  return (r.body.content as { id: string; name: string }[]).find((c) => c.name === name)!.id;
}
