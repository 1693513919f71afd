// POST /cluster/namespace (Ilum 1.5.3's `{name}` body, plus our optional clusterName) through the real API:
// which cluster it goes to, the refusals, and the Namespace the k8s cluster's API server is sent (the
// fake Kubernetes API server records it; it serves no namespace creation, so it answers 404 NotFound,
// which the API words as a 409 naming the cluster).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeK8s, type FakeK8s } from '../../testkit/fake-k8s';
import { call, startHarness, type Harness } from '../harness';

let h: Harness;
let k8s: FakeK8s;

beforeAll(async () => {
  k8s = await startFakeK8s();
  h = await startHarness({ worker: false });
});

afterAll(async () => {
  await h?.stop();
  await k8s?.stop();
});

const create = (body: unknown) => call(h, 'POST', '/cluster/namespace', body);

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

  it("sends the Namespace to the only k8s cluster's API server and never echoes its credentials", async () => {
    const c = await call(h, 'POST', '/cluster', {
      name: 'ns-k8s',
      type: 'k8s',
      url: k8s.url,
      username: 'admin',
      password: 'k8s-secret-password',
    });
    expect(c.status).toBe(200);
    const r = await create({ name: 'team-a' });
    const sent = k8s.requests.filter((q) => q.method === 'POST' && q.path === '/api/v1/namespaces');
    expect(sent).toHaveLength(1);
    expect(sent[0].body).toMatchObject({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', labels: { 'app.kubernetes.io/managed-by': 'spark-orchestrator' } },
    });
    expect(sent[0].authorization).toBe(`Basic ${Buffer.from('admin:k8s-secret-password').toString('base64')}`);
    // The fake serves no namespaces: its 404 comes back as a conflict naming the cluster.
    expect(r.status).toBe(409);
    expect(r.body.message).toContain("cluster 'ns-k8s'");
    expect(JSON.stringify(r.body)).not.toContain('k8s-secret-password');

    // With two k8s clusters the request must say which.
    await call(h, 'POST', '/cluster', { name: 'ns-k8s-2', type: 'k8s', url: k8s.url });
    const two = await create({ name: 'team-b' });
    expect(two.status).toBe(409);
    expect(two.body.message).toContain('clusterName');
    await create({ name: 'team-b', clusterName: 'ns-k8s-2' });
    expect(k8s.requests.filter((q) => q.path === '/api/v1/namespaces')).toHaveLength(2);
  });
});
