// Per-cluster Kubernetes settings against the real kube-apiserver (testkit/kube): a k8s cluster's `namespace`
// and `sparkImage` place its drivers (pods, services, secrets, NetworkPolicies, a group's runners) in that
// namespace with that image; a driver launched before the cluster's namespace changed is still watched, read
// and removed where it was launched; and a running watch follows a change of the cluster's URL or credentials
// (it asks the adapter registry on every poll). The chart's RBAC is rendered for two drivers' namespaces
// (spark.namespaces), the service holds only its account's TokenRequest token, and the kubelet stand-in runs
// the pods of both namespaces.
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { k8sNames } from '../../activities/adapters/k8s/names';
import { memoryPlacements, type K8sCluster } from '../../activities/adapters/k8s/options';
import { sqlEngineDriverId } from '../../domain/sql-engine';
import { Collections } from '../../lib/mongo';
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

const RELEASE_NS = 'settings-rel';
const RELEASE = 'settings';
/** The service's K8S_NAMESPACE (the chart's first namespace) and a team's namespace. */
const NS_A = 'settings-a';
const NS_B = 'settings-b';
const IMAGE_B = 'registry.example:5000/team-b/spark:3.5.7-python3';
const ready = realK8sReady();

let cp: ControlPlaneInfo;
let release: ChartRelease;
let storage: MotoServer;
let h: Harness;

/** Every pod holds, and says where it runs and with which image. */
const plan = (pod: V1Pod): PodPlan => ({
  hold: [`running in ${pod.metadata?.namespace} with ${pod.spec?.containers?.[0]?.image}`, 'second line'],
});

const k8s = realK8s({
  release: RELEASE,
  releaseNs: RELEASE_NS,
  // Both drivers' namespaces exist before the chart (it creates only its default one); NS_A is its first.
  namespaces: [NS_A, NS_B],
  values: { spark: { namespaces: [NS_A, NS_B] } },
  kubeletNamespaces: [NS_A, NS_B],
  name: 'settings',
  plan,
});

const cluster = (name: string, extra: Record<string, unknown> = {}) =>
  realK8sCluster(cp, storage, name, { caCert: cp.caCert, token: release.token, ...extra });

beforeAll(async () => {
  let ns: string;
  ({ cp, release, storage, h, ns } = await k8s.start(inject('testDir')));
  expect(ns).toBe(NS_A);
}, K8S_SETUP_TIMEOUT_MS);
afterAll(() => k8s.stop());

const admin = (method: string, p: string, body?: unknown) => kubeRequest(cp, cp.adminToken, method, p, body);
const KINDS = ['pods', 'services', 'secrets', 'configmaps', 'networkpolicies'];
/** Objects of the driver's kinds in a namespace, labelled `selector`. */
async function objectsIn(ns: string, selector: string): Promise<string[]> {
  const all = await Promise.all(
    KINDS.map(async (kind) => {
      const group = kind === 'networkpolicies' ? '/apis/networking.k8s.io/v1' : '/api/v1';
      const r = await admin('GET', `${group}/namespaces/${ns}/${kind}?labelSelector=${encodeURIComponent(selector)}`);
      expect(r.status).toBe(200);
      return (r.body.items as { metadata: { name: string } }[]).map((o) => `${kind}/${o.metadata.name}`);
    }),
  );
  return all.flat();
}
const jobSel = (jobId: string) => `spark-orchestrator.io/job-id=${jobId}`;
async function podOf(ns: string, selector: string): Promise<V1Pod | undefined> {
  const r = await admin('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`);
  return (r.body.items as V1Pod[])[0];
}
const nothingLeft = (selector: string) =>
  eventually(async () => {
    const left = [...(await objectsIn(NS_A, selector)), ...(await objectsIn(NS_B, selector))];
    return left.length === 0 ? true : undefined;
  }, 60_000);

async function clusterId(name: string): Promise<string> {
  const r = await call(h, 'GET', `/cluster?search=${name}&size=50`);
  return (r.body.content as { id: string; name: string }[]).find((c) => c.name === name)!.id;
}
const submit = async (name: string, clusterName: string) => {
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
const running = (j: Record<string, any>) => j.state === 'BUSY';
const logLines = (id: string) =>
  eventually(async () => {
    const r = await call(h, 'GET', `/job/${id}/logs`);
    return r.status === 200 && r.body[0]?.log?.length ? (r.body[0].log as string[]) : undefined;
  }, 30_000);

describe.skipIf(!ready)("a k8s cluster's namespace and Spark image, on a real API server", () => {
  it('validates both, refuses them on a local cluster like the other k8s-only fields, and shows them', async () => {
    for (const [patch, field] of [
      [{ namespace: 'Team_B' }, 'namespace'],
      [{ namespace: 'x'.repeat(64) }, 'namespace'],
      [{ namespace: '-b' }, 'namespace'],
      [{ sparkImage: 'not an image' }, 'sparkImage'],
      [{ sparkImage: 'spark:' }, 'sparkImage'],
      [{ sparkImage: 'https://registry/spark' }, 'sparkImage'],
    ] as const) {
      const r = await call(h, 'POST', '/cluster', cluster(`bad-${field}`, patch));
      expect(r.status, JSON.stringify(patch)).toBeGreaterThanOrEqual(400);
      expect(r.status, JSON.stringify(patch)).toBeLessThan(500);
      expect(r.body.message).toContain(field);
    }
    // Local clusters: refused with the status and words of allowedAccessSettings, the older k8s-only field.
    const access = await call(h, 'POST', '/cluster', { name: 'l1', type: 'local', allowedAccessSettings: ['volumes'] });
    expect(access.status).toBeGreaterThanOrEqual(400);
    expect(access.status).toBeLessThan(500);
    for (const field of ['namespace', 'sparkImage']) {
      const r = await call(h, 'POST', '/cluster', { name: 'l2', type: 'local', [field]: 'team-b' });
      expect(r.status).toBe(access.status);
      expect(r.body.message).toMatch(new RegExp(`${field}.*k8s clusters only`));
    }
    const local = await call(h, 'POST', '/cluster', { name: 'l3', type: 'local' });
    expect(local.status).toBe(200);
    const put = await call(h, 'PUT', `/cluster/${local.body.clusterId}`, { namespace: 'team-b' });
    expect(put.status).toBe(access.status);
    expect(put.body.message).toMatch(/namespace.*k8s clusters only/);

    const ok = await call(
      h,
      'POST',
      '/cluster',
      cluster('shown', { namespace: NS_B, sparkImage: `${IMAGE_B}@sha256:${'a'.repeat(64)}` }),
    );
    expect(ok.status).toBe(200);
    const got = await call(h, 'GET', `/cluster/${ok.body.clusterId}`);
    expect(got.body).toMatchObject({ namespace: NS_B, sparkImage: `${IMAGE_B}@sha256:${'a'.repeat(64)}` });
    expect(JSON.stringify(got.body)).not.toContain(release.token);
    // The served document has both fields, from the same schema.
    const doc = await call(h, 'GET', '/openapi.json');
    expect(JSON.stringify(doc.body)).toContain('sparkImage');
  });

  it("a job's driver goes to the cluster's namespace with its image; its logs and cancel work there", async () => {
    expect(
      (await call(h, 'POST', '/cluster', cluster('team-b', { namespace: NS_B, sparkImage: IMAGE_B }))).status,
    ).toBe(200);
    const id = await submit('in-b', 'team-b');
    await jobWhen(id, running);
    const pod = await podOf(NS_B, jobSel(id));
    expect(pod, 'driver pod in the cluster namespace').toBeDefined();
    expect(await podOf(NS_A, jobSel(id))).toBeUndefined();
    expect(pod!.spec!.containers[0].image).toBe(IMAGE_B);
    // Executors get the same image (Spark's property), and find the driver by its service in NS_B.
    const args = (pod!.spec!.containers[0].args ?? []).join(' ');
    expect(args).toContain(`spark.kubernetes.container.image=${IMAGE_B}`);
    expect(args).toContain(`spark.kubernetes.namespace=${NS_B}`);
    expect(args).toMatch(new RegExp(`spark\\.driver\\.host=[^ ]+\\.${NS_B}\\.svc`));
    const objects = await objectsIn(NS_B, jobSel(id));
    for (const kind of ['services/', 'secrets/', 'networkpolicies/'])
      expect(objects.some((o) => o.startsWith(kind))).toBe(true);
    expect(await logLines(id)).toContain(`running in ${NS_B} with ${IMAGE_B}`);
    expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
    await jobWhen(id, (j) => j.state === 'CANCELED');
    await nothingLeft(jobSel(id));
    // The copy remove saved, read after the pods went.
    expect(await logLines(id)).toContain('second line');
  });

  it("a group's runner pods go to the cluster's namespace too, and go with the group", async () => {
    const r = await call(
      h,
      'POST',
      '/group',
      form({ name: 'runners-b', kind: 'CODE', language: 'PYTHON', scale: '1', clusterName: 'team-b' }),
    );
    expect(r.status).toBe(200);
    const sel = `spark-orchestrator.io/group-id=${r.body.groupId}`;
    const pod = await eventually(async () => podOf(NS_B, sel), 60_000);
    expect(pod.spec!.containers[0].image).toBe(IMAGE_B);
    expect(await podOf(NS_A, sel)).toBeUndefined();
    expect((await call(h, 'DELETE', `/group/${r.body.groupId}`)).status).toBe(200);
    await nothingLeft(sel);
  });

  it("a driver launched before its cluster's namespace changed is watched, read and removed where it runs", async () => {
    expect((await call(h, 'POST', '/cluster', cluster('moving'))).status).toBe(200);
    const before = await submit('before-move', 'moving');
    await jobWhen(before, running);
    const podA = await podOf(NS_A, jobSel(before));
    expect(podA?.spec?.containers[0].image).toBe('apache/spark:3.5.7-python3');

    const put = await call(h, 'PUT', `/cluster/${await clusterId('moving')}`, { namespace: NS_B, sparkImage: IMAGE_B });
    expect(put.status).toBe(200);
    const after = await submit('after-move', 'moving');
    await jobWhen(after, running);
    expect((await podOf(NS_B, jobSel(after)))?.spec?.containers[0].image).toBe(IMAGE_B);
    expect(await podOf(NS_A, jobSel(after))).toBeUndefined();

    // Several polls of the watch later, the first driver is still seen running in NS_A (not MISSING in NS_B).
    await new Promise((r) => setTimeout(r, 3_000));
    const still = (await call(h, 'GET', `/job/${before}`)).body;
    expect(still.state).toBe('BUSY');
    expect(await logLines(before)).toContain(`running in ${NS_A} with apache/spark:3.5.7-python3`);
    expect((await call(h, 'POST', `/job/${before}/cancel`)).status).toBe(200);
    await jobWhen(before, (j) => j.state === 'CANCELED');
    await nothingLeft(jobSel(before));
    expect((await jobWhen(before, (j) => !j.cleanup, 30_000)).cleanup).toBeUndefined();

    expect(await logLines(after)).toContain(`running in ${NS_B} with ${IMAGE_B}`);
    expect((await call(h, 'POST', `/job/${after}/stop`)).status).toBe(200);
    await nothingLeft(jobSel(after));
  });

  it("a running watch follows a change of the cluster's credentials and URL", async () => {
    expect((await call(h, 'POST', '/cluster', cluster('rekeyed', { namespace: NS_B }))).status).toBe(200);
    const cid = await clusterId('rekeyed');
    const id = await submit('rekeyed', 'rekeyed');
    await jobWhen(id, running);
    // The watch started with the first token. A token without rights in NS_B replaces it: the next polls use it.
    await createNamespace(cp, 'settings-none');
    const weak = await serviceAccountToken(cp, 'settings-none', 'default');
    expect((await call(h, 'PUT', `/cluster/${cid}`, { token: weak })).status).toBe(200);
    const unknown = await jobWhen(id, (j) => j.state === 'UNKNOWN', 20_000);
    expect(unknown.error).toMatch(/forbidden/i);
    expect(unknown.error).toContain('system:serviceaccount:settings-none:default');
    expect(JSON.stringify(unknown)).not.toContain(weak);
    // The chart's token back: the same watch (UNKNOWN → BUSY) sees the driver again.
    expect((await call(h, 'PUT', `/cluster/${cid}`, { token: release.token })).status).toBe(200);
    await jobWhen(id, running, 20_000);
    // A URL nothing listens on, then the API server's again.
    // (A new URL takes its credentials again: credentials.ts.)
    const moved = await call(h, 'PUT', `/cluster/${cid}`, { url: 'https://127.0.0.1:9', token: release.token });
    expect(moved.status).toBe(200);
    expect((await jobWhen(id, (j) => j.state === 'UNKNOWN', 20_000)).error).toMatch(/127\.0\.0\.1:9/);
    expect((await call(h, 'PUT', `/cluster/${cid}`, { url: cp.url, token: release.token })).status).toBe(200);
    await jobWhen(id, running, 20_000);
    expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
    await nothingLeft(jobSel(id));
    // Its placement record goes with the driver; whatever a deleted cluster leaves goes with the cluster.
    const placements = h.store.col(Collections.placements);
    const ofCluster = { _id: { $regex: `^${cid}/` } as never };
    await eventually(async () => ((await placements.countDocuments(ofCluster)) === 0 ? true : undefined), 30_000);
    await jobWhen(id, (j) => !j.cleanup, 30_000);
    expect((await call(h, 'DELETE', `/job/${id}`)).status).toBe(200);
    await placements.insertOne({ _id: `${cid}/job-left-1` as never, namespace: NS_B, time: Date.now() });
    expect((await call(h, 'DELETE', `/cluster/${cid}`)).status).toBe(200);
    expect(await placements.countDocuments(ofCluster)).toBe(0);
  });

  it("an SQL engine runs in the cluster's namespace, and is still found and removed there after a change", async () => {
    const base: K8sCluster = { name: 'engines', url: cp.url, caCert: cp.caCert, token: release.token };
    const config = {
      K8S_NAMESPACE: NS_A,
      ARTIFACT_DIR: '/srv/artifacts',
      K8S_SPARK_IMAGE: 'apache/spark:3.5.7-python3',
    };
    // One record of placements, as the registry keeps one per cluster across its document's versions.
    const placements = memoryPlacements();
    const inB = createK8sAdapter({ cluster: { ...base, namespace: NS_B }, config, placements });
    const driverId = sqlEngineDriverId('engines', 'TRINO', 1);
    const n = k8sNames(driverId);
    await inB.launch({
      driverId,
      role: 'sql-engine',
      engine: { type: 'TRINO', stateKey: 'engines' },
      env: {},
      labels: {},
      spark: sparkSpec({ name: 'TRINO engine', language: 'SCALA', clusterName: 'engines' }),
    });
    expect((await admin('GET', `/api/v1/namespaces/${NS_B}/pods/${n.pod}`)).status).toBe(200);
    expect((await admin('GET', `/api/v1/namespaces/${NS_B}/configmaps/${n.configMap}`)).status).toBe(200);
    await eventually(async () => ((await inB.status(driverId)).phase === 'RUNNING' ? true : undefined), 30_000);
    // The cluster moves back to the service's namespace: a new adapter, the engine still where it runs.
    const moved = createK8sAdapter({ cluster: base, config, placements });
    const st = await moved.status(driverId);
    expect(st.phase).toBe('RUNNING');
    expect(st.endpoint).toEqual({ host: `${n.engineService}.${NS_B}.svc`, port: 8080 });
    expect((await moved.logs(driverId, { from: 0, size: 10 }))[0]).toMatchObject({ name: n.pod, state: 'Running' });
    await moved.remove(driverId);
    await eventually(async () => {
      const left = await Promise.all(
        [`pods/${n.pod}`, `configmaps/${n.configMap}`, `services/${n.engineService}`].map(
          async (p) => (await admin('GET', `/api/v1/namespaces/${NS_B}/${p}`)).status,
        ),
      );
      return left.every((x) => x === 404) ? true : undefined;
    }, 30_000);
    expect(await placements.get(driverId)).toBeUndefined();
  });
});
