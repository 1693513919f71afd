// POST /cluster/namespace (Ilum 1.5.3's `{name}` body, plus our optional clusterName) through the real API,
// against the real kube-apiserver (testkit/kube): which cluster it goes to, the refusals, the Namespace the
// API server creates (with our label), one that exists already, and credentials without the right to create
// namespaces (the chart gives the service none), whose token never shows in the answer.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { installChartRbac, helmAvailable, type ChartRelease } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import { call, startHarness, type Harness } from '../harness';

const ready = k8sAvailable() && helmAvailable();
let h: Harness;
let cp: ControlPlaneInfo;
let release: ChartRelease;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  if (!ready) return;
  cp = await sharedControlPlane(inject('testDir'));
  release = await installChartRbac(cp, 'nsconf', 'nsconf-rel');
}, K8S_SETUP_TIMEOUT_MS);

afterAll(async () => {
  await h?.stop();
});

const create = (body: unknown) => call(h, 'POST', '/cluster/namespace', body);
const k8sCluster = (name: string, token: string) => ({ name, type: 'k8s', url: cp.url, caCert: cp.caCert, token });

describe('POST /cluster/namespace', () => {
  it('refuses without a k8s cluster, on a local one, for an unknown cluster and for a bad name', async () => {
    const none = await create({ name: 'team-a' });
    expect(none.status).toBe(409);
    expect(none.body.message).toContain('no k8s cluster');
    const local = await create({ name: 'team-a', clusterName: 'default' });
    expect(local.status).toBe(409);
    expect(local.body.message).toContain('local');
    expect((await create({ name: 'team-a', clusterName: 'nope' })).status).toBe(404);
    for (const name of ['Team_A', '-a', 'a'.repeat(64), '']) expect((await create({ name })).status).toBe(409);
    expect((await create({})).status).toBe(409);
    expect((await call(h, 'POST', '/cluster/namespace', 'name=x', { 'content-type': 'text/plain' })).status).toBe(400);
  });

  it.skipIf(!ready)(
    "creates the labelled Namespace on the only k8s cluster's API server; refusals carry the server's words, never the token",
    async () => {
      expect((await call(h, 'POST', '/cluster', k8sCluster('ns-k8s', cp.adminToken))).status).toBe(200);
      expect((await create({ name: 'nsconf-team-a' })).status).toBe(200);
      const ns = await kubeRequest(cp, cp.adminToken, 'GET', '/api/v1/namespaces/nsconf-team-a');
      expect(ns.status).toBe(200);
      expect(ns.body.metadata.labels['app.kubernetes.io/managed-by']).toBe('spark-orchestrator');
      // Again: the API server's AlreadyExists, as a conflict naming the namespace and the cluster.
      const again = await create({ name: 'nsconf-team-a' });
      expect(again.status).toBe(409);
      expect(again.body.message).toBe("namespace 'nsconf-team-a' already exists on cluster 'ns-k8s'");
      expect(JSON.stringify(again.body)).not.toContain(cp.adminToken);

      // With two k8s clusters the request must say which.
      expect((await call(h, 'POST', '/cluster', k8sCluster('ns-chart', release.token))).status).toBe(200);
      const two = await create({ name: 'nsconf-team-b' });
      expect(two.status).toBe(409);
      expect(two.body.message).toContain('clusterName');
      // The chart's account may not create namespaces: the API server's "forbidden", naming the cluster.
      const refused = await create({ name: 'nsconf-team-b', clusterName: 'ns-chart' });
      expect(refused.status).toBe(409);
      expect(refused.body.message).toContain("cluster 'ns-chart'");
      expect(refused.body.message).toMatch(/forbidden.*cannot create resource "namespaces"/);
      expect(JSON.stringify(refused.body)).not.toContain(release.token);
      expect((await kubeRequest(cp, cp.adminToken, 'GET', '/api/v1/namespaces/nsconf-team-b')).status).toBe(404);
      expect((await create({ name: 'nsconf-team-b', clusterName: 'ns-k8s' })).status).toBe(200);
      expect((await kubeRequest(cp, cp.adminToken, 'GET', '/api/v1/namespaces/nsconf-team-b')).status).toBe(200);
    },
  );
});
