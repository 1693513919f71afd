// Client-certificate authentication of a k8s cluster on the real kube-apiserver (testkit/kube): the API
// server trusts the control plane's client CA (--client-ca-file), a certificate's CN is the user and its O
// fields the groups. The user is bound to the chart's own roles (the bindings the chart renders for the
// service's account, made for the user instead), and the cluster is registered through the API with
// clientCert, clientKey (plain, or encrypted with clientKeyPassphrase, PEM or base64) and caCert, no token.
// A job's driver pod is created and its log read through the API server; a user without rights fails the
// job with the API server's "forbidden"; a certificate of another CA, a wrong passphrase and no certificate
// at all fail the job with a clear message. No key or passphrase comes back in any answer.
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ChartRelease } from '../../testkit/kube/chart-rbac';
import {
  issueClientCert,
  kubeRequest,
  type ClientCertificate,
  type ControlPlaneInfo,
} from '../../testkit/kube/control-plane';
import { K8S_SETUP_TIMEOUT_MS } from '../../testkit/kube/shared';
import type { MotoServer } from '../../testkit/moto';
import { call, eventually, form, type Harness } from '../harness';
import { realK8s, realK8sCluster, realK8sReady } from './real-k8s-fixture';

const RELEASE_NS = 'client-cert';
const RELEASE = 'clientcert';
const USER = 'spark-orchestrator-cert';
const GROUP = 'spark-operators';
const PASSPHRASE = 'client-key-passphrase-31';
const ready = realK8sReady();
const k8s = realK8s({
  release: RELEASE,
  releaseNs: RELEASE_NS,
  plan: (pod) => ({ hold: [`driver of ${pod.metadata?.name} running`, 'second line'] }),
});

let cp: ControlPlaneInfo;
let release: ChartRelease;
let storage: MotoServer;
let h: Harness;
let NS: string;
/** Every key and passphrase of this file: none may come back in an answer. */
const secrets: string[] = [PASSPHRASE];

const b64 = (s: string) => Buffer.from(s).toString('base64');

const cluster = (name: string, creds: Record<string, string>) => realK8sCluster(cp, storage, name, creds);

const issue = (o: Parameters<typeof issueClientCert>[1]): ClientCertificate => {
  const c = issueClientCert(cp, o);
  secrets.push(c.key, ...c.key.split('\n').filter((l) => l.length > 40));
  return c;
};

/** Copies of the chart's bindings of the service's account, bound to a User instead. */
async function bindUserAsTheService(user: string): Promise<void> {
  const bindings = release.objects.filter(
    (o) =>
      (o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') &&
      (o.subjects as { kind: string; name: string }[] | undefined)?.some(
        (s) => s.kind === 'ServiceAccount' && s.name === release.serviceAccount,
      ),
  );
  expect(bindings.length).toBeGreaterThan(0);
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  for (const b of bindings) {
    const namespaced = b.kind === 'RoleBinding';
    const ns = (b.metadata.namespace ?? RELEASE_NS) as string;
    const r = await kubeRequest(
      cp,
      cp.adminToken,
      'POST',
      namespaced ? `${rbac}/namespaces/${ns}/rolebindings` : `${rbac}/clusterrolebindings`,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: b.kind,
        metadata: { name: `${b.metadata.name}-user-${user}`, ...(namespaced ? { namespace: ns } : {}) },
        roleRef: b.roleRef,
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    );
    expect([201, 409], r.text).toContain(r.status);
  }
}

beforeAll(async () => {
  ({ cp, release, storage, h, ns: NS } = await k8s.start(inject('testDir')));
  await bindUserAsTheService(USER);
}, K8S_SETUP_TIMEOUT_MS);
afterAll(() => k8s.stop());

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
const pods = async (jobId: string) => {
  const r = await kubeRequest(
    cp,
    cp.adminToken,
    'GET',
    `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`spark-orchestrator.io/job-id=${jobId}`)}`,
  );
  expect(r.status).toBe(200);
  return r.body.items as { metadata: { name: string } }[];
};
const noSecretIn = (...bodies: unknown[]) => {
  for (const b of bodies) {
    const text = JSON.stringify(b);
    expect(text).not.toMatch(/PRIVATE KEY/);
    for (const s of secrets) expect(text).not.toContain(s);
  }
};
const register = async (name: string, creds: Record<string, string>) => {
  const r = await call(h, 'POST', '/cluster', cluster(name, creds));
  expect(r.status).toBe(200);
  noSecretIn(r.body);
};
/** A job on the cluster that FAILS: its error. */
const failure = async (clusterName: string) => {
  const id = await submit(`on-${clusterName}`, clusterName);
  const failed = await jobWhen(id, (j) => j.state === 'FAILED');
  expect(await pods(id)).toEqual([]);
  const logs = await call(h, 'GET', `/job/${id}/logs`);
  // The cluster cannot be asked with these credentials: 503 with why (docs/api.md), never a 500.
  expect([200, 503]).toContain(logs.status);
  if (logs.status === 503)
    expect(logs.body.message).toMatch(/cannot be read now: .*(Forbidden|Unauthorized|clientKey)/);
  noSecretIn(failed, logs.body);
  return String(failed.error);
};

describe.skipIf(!ready)('client certificates on a real API server', () => {
  it("the API server takes the user and groups from the certificate; the chart's bindings give that user its rights", async () => {
    const { cert, key } = issue({ user: USER, groups: [GROUP] });
    const r = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const q = https.request(
        `${cp.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
        { method: 'POST', ca: cp.caCert, cert, key, headers: { 'content-type': 'application/json' }, timeout: 15_000 },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      q.on('error', reject);
      q.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
    });
    expect(r.status).toBe(201);
    expect(r.body.status.userInfo.username).toBe(USER);
    expect(r.body.status.userInfo.groups).toContain(GROUP);
  });

  it('a cluster with clientCert/clientKey/caCert and no token: the driver pod is created, its log read through the API server', async () => {
    const { cert, key } = issue({ user: USER, groups: [GROUP] });
    await register('cert', { caCert: cp.caCert, clientCert: cert, clientKey: key });
    const shown = await call(h, 'GET', `/cluster/${await clusterId('cert')}`);
    expect(shown.status).toBe(200);
    expect(shown.body.clientKey).toBe('******');
    noSecretIn(shown.body);

    const id = await submit('cert-holds', 'cert');
    await jobWhen(id, (j) => j.state === 'BUSY' || j.state === 'RUNNING');
    expect(await pods(id)).toHaveLength(1);
    const logs = await eventually(async () => {
      const r = await call(h, 'GET', `/job/${id}/logs`);
      return r.status === 200 && r.body[0]?.log?.length ? r.body : undefined;
    }, 20_000);
    expect(logs[0].role).toBe('driver');
    expect(logs[0].log[0]).toMatch(/^driver of .* running$/);
    expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
    await eventually(async () => ((await pods(id)).length === 0 ? true : undefined), 30_000);
  });

  it('a key encrypted with clientKeyPassphrase, all PEMs base64 (kubeconfig style): the driver runs', async () => {
    const { cert, key } = issue({ user: USER, groups: [GROUP], passphrase: PASSPHRASE });
    expect(key).toContain('BEGIN ENCRYPTED PRIVATE KEY');
    await register('cert-encrypted', {
      caCert: b64(cp.caCert),
      clientCert: b64(cert),
      clientKey: b64(key),
      clientKeyPassphrase: PASSPHRASE,
    });
    const id = await submit('cert-encrypted', 'cert-encrypted');
    await jobWhen(id, (j) => j.state === 'BUSY' || j.state === 'RUNNING');
    expect(await pods(id)).toHaveLength(1);
    expect((await call(h, 'POST', `/job/${id}/cancel`)).status).toBe(200);
    await eventually(async () => ((await pods(id)).length === 0 ? true : undefined), 30_000);
  });

  it('a wrong clientKeyPassphrase, or an encrypted key without one: refused (409) when the cluster is written', async () => {
    const { cert, key } = issue({ user: USER, passphrase: PASSPHRASE });
    const wrong = 'not-the-passphrase-77';
    secrets.push(wrong);
    const base = { caCert: cp.caCert, clientCert: cert, clientKey: key };
    const refused = [
      await call(h, 'POST', '/cluster', cluster('cert-wrong-pass', { ...base, clientKeyPassphrase: wrong })),
      await call(h, 'POST', '/cluster', cluster('cert-no-pass', base)),
      await call(h, 'POST', '/cluster', cluster('cert-bad-key', { ...base, clientKey: 'not a key' })),
    ];
    expect(refused.map((r) => r.status)).toEqual([409, 409, 409]);
    expect(refused[0].body.message).toMatch(/clientKeyPassphrase does not decrypt clientKey/);
    expect(refused[1].body.message).toMatch(/needs clientKeyPassphrase/);
    for (const r of refused) noSecretIn(r.body);
    // An update that would leave the stored key undecryptable is refused the same way, and changes nothing.
    await register('cert-pass-update', { ...base, clientKeyPassphrase: PASSPHRASE });
    const id = await clusterId('cert-pass-update');
    const u = await call(h, 'PUT', `/cluster/${id}`, { clientKeyPassphrase: wrong });
    expect(u.status).toBe(409);
    noSecretIn(u.body);
    const ok = await submit('on-cert-pass-update', 'cert-pass-update');
    await jobWhen(ok, (j) => j.state === 'BUSY' || j.state === 'RUNNING');
    expect((await call(h, 'POST', `/job/${ok}/cancel`)).status).toBe(200);
  });

  it('a certificate of a user without rights: the job FAILS with the API server\'s "forbidden" naming the user', async () => {
    const { cert, key } = issue({ user: 'cert-nobody', groups: ['nobodies'] });
    await register('cert-no-rights', { caCert: cp.caCert, clientCert: cert, clientKey: key });
    const error = await failure('cert-no-rights');
    expect(error).toMatch(/forbidden/i);
    expect(error).toContain('User "cert-nobody"');
  });

  it('a certificate of another CA: the API server refuses it (401) and the job FAILS saying so', async () => {
    // Same user name as the one with rights: only the signature differs.
    const { cert, key } = issue({ user: USER, groups: [GROUP], foreignCa: true });
    await register('cert-foreign', { caCert: cp.caCert, clientCert: cert, clientKey: key });
    expect(await failure('cert-foreign')).toMatch(/401|Unauthorized/);
  });

  it('caCert but no client certificate nor token: anonymous, refused, the job FAILS with a clear message', async () => {
    await register('cert-none', { caCert: cp.caCert });
    expect(await failure('cert-none')).toMatch(/forbidden|401|Unauthorized/i);
  });
});

async function clusterId(name: string): Promise<string> {
  const r = await call(h, 'GET', `/cluster?search=${name}&size=50`);
  return (r.body.content as { id: string; name: string }[]).find((c) => c.name === name)!.id;
}
