// Spark settings that would give a k8s driver's pods access beyond their own (secrets of the namespace, host
// volumes, pod templates, another service account or namespace) through the real API, worker and k8s adapter
// against the fake Kubernetes API server: refused with 409 naming the key at every entry point (job submit,
// group and schedule create and update, group rescale, Livy sessions and batches, SQL engines, the cluster's
// own defaults) before anything starts, and let through where the cluster's allowedAccessSettings allows them.
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { startLivy, type RunningLivy } from '../../api/livy/server';
import { Collections } from '../../lib/mongo';
import { startFakeK8s, type FakeK8s } from '../../testkit/fake-k8s';
import { startMoto, type MotoServer } from '../../testkit/moto';
import { call, eventually, form, startHarness, type Harness } from '../harness';
import { sparkSpec } from '../../testkit/spark-spec';

const livyDir = mkdtempSync(path.join(os.tmpdir(), 'livy-access-'));
const livyMain = path.join(livyDir, 'main.py');
writeFileSync(livyMain, 'print("hello")\n');

let h: Harness;
let k8s: FakeK8s;
let moto: MotoServer;
let livy: RunningLivy;

const storage = () => ({
  sparkStorage: 'main',
  storages: {
    main: { sparkBucket: 'spark', endpoint: moto.endpoint, accessKey: 'ACCESS-ID', secretKey: 'SECRET-VALUE' },
  },
});
const cluster = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'k8s',
  url: k8s.url,
  username: 'admin',
  password: 'k8s-password',
  temporalAddress: 'temporal-frontend.temporal.svc:7233',
  ...storage(),
  ...extra,
});

beforeAll(async () => {
  moto = await startMoto();
  const s3 = new S3Client({
    endpoint: moto.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ACCESS-ID', secretAccessKey: 'SECRET-VALUE' },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'spark' }));
  k8s = await startFakeK8s({ phases: { pendingMs: 50, runMs: null } });
  h = await startHarness({ env: { LIVY_LOCAL_DIRS: livyDir } });
  livy = await startLivy({ config: h.config, store: h.store, temporal: h.temporal }, { port: 0, host: '127.0.0.1' });
  for (const c of [cluster('strict'), cluster('lenient', { allowedAccessSettings: ['secrets', 'serviceAccount'] })]) {
    const r = await call(h, 'POST', '/cluster', c);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
});
afterAll(async () => {
  await livy?.close();
  await h?.stop();
  await k8s?.stop();
  await moto?.stop();
});

const app = { pyFiles: [{ name: 'main.py', content: 'print("hello from a pod")\n' }] };
const jobForm = (clusterName: string, jobConfig: string) =>
  form({ name: 'access', language: 'PYTHON', jobClass: 'main', clusterName, jobConfig }, app);
const clusterNamed = (name: string) => h.store.col<{ _id: string }>(Collections.clusters).findOne({ name });
const podsOf = (label: string, value: string) =>
  [...k8s.state.pods.values()].filter((p) => p.metadata.labels?.[label] === value);
const livyPost = async (p: string, body: unknown) => {
  const res = await fetch(livy.url + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { message: string; msg?: string } };
};

// One key of each kind, and spellings Spark would read the same way.
const REFUSED: [key: string, value: string, kind: string][] = [
  ['spark.kubernetes.executor.secrets.spark-orchestrator', '/mnt/service', 'secrets'],
  ['spark.kubernetes.driver.secretKeyRef.MONGO_URL', 'spark-orchestrator:MONGO_URL', 'secrets'],
  ['spark.kubernetes.executor.volumes.hostPath.root.mount.path', '/host', 'volumes'],
  ['spark.kubernetes.executor.volumes.hostPath.root.options.path', '/', 'volumes'],
  ['spark.kubernetes.executor.volumes.persistentVolumeClaim.d.options.claimName', 'data', 'volumes'],
  ['spark.kubernetes.executor.podTemplateFile', 's3a://spark/host-network.yaml', 'podTemplates'],
  ['spark.kubernetes.executor.podTemplateContainerName', 'x', 'podTemplates'],
  ['spark.kubernetes.authenticate.driver.serviceAccountName', 'spark-orchestrator', 'serviceAccount'],
  ['spark.kubernetes.authenticate.executor.serviceAccountName', 'default', 'serviceAccount'],
  ['spark.kubernetes.authenticate.oauthTokenFile', '/var/run/secrets/token', 'credentials'],
  ['spark.kubernetes.namespace', 'spark-orchestrator', 'namespace'],
  ['spark.Kubernetes.Executor.Volumes.HostPath.x.mount.path', '/host', 'volumes'],
];

describe('Spark settings that grant access, on a k8s cluster that allows none', () => {
  it.each(REFUSED)(
    'a job setting %s is refused with 409 naming the key, and starts nothing',
    async (key, value, kind) => {
      const pods = k8s.state.pods.size;
      const r = await call(
        h,
        'POST',
        '/job/submit',
        jobForm('strict', `spark.sql.shuffle.partitions=2;${key}=${value}`),
      );
      expect(r.status).toBe(409);
      expect(r.body.message).toContain(key);
      expect(r.body.message).toContain(`'${kind}'`);
      expect(r.body.message).toContain("Cluster 'strict' does not allow it");
      expect(r.body.message).not.toContain('spark.sql.shuffle.partitions');
      expect(k8s.state.pods.size).toBe(pods);
      const stored = await h.store.col(Collections.jobs).countDocuments({ jobName: 'access', clusterName: 'strict' });
      expect(stored).toBe(0);
    },
  );

  it('names every refused key of one request', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      jobForm('strict', 'spark.kubernetes.executor.secrets.a=/a;spark.kubernetes.namespace=kube-system'),
    );
    expect(r.status).toBe(409);
    expect(r.body.message).toContain('spark.kubernetes.executor.secrets.a');
    expect(r.body.message).toContain('spark.kubernetes.namespace');
  });

  it('refuses them in a group and a schedule, created or updated, before any workflow starts', async () => {
    const hostPath = 'spark.kubernetes.executor.volumes.hostPath.root.mount.path=/host';
    const g = await call(
      h,
      'POST',
      '/group',
      form({ name: 'access-group', language: 'PYTHON', clusterName: 'strict', jobConfig: hostPath }, app),
    );
    expect(g.status).toBe(409);
    expect(g.body.message).toContain('spark.kubernetes.executor.volumes.hostPath.root.mount.path');
    expect((await call(h, 'GET', '/group/name/access-group')).status).toBe(404);

    const template = 'spark.kubernetes.executor.podTemplateFile=s3a://spark/t.yaml';
    const scheduleFields = { name: 'access-schedule', language: 'PYTHON', jobClass: 'main', clusterName: 'strict' };
    const s = await call(
      h,
      'POST',
      '/schedule',
      form({ ...scheduleFields, cron: '0 3 * * *', jobConfig: template }, app),
    );
    expect(s.status).toBe(409);
    expect(s.body.message).toContain('spark.kubernetes.executor.podTemplateFile');
    expect((await call(h, 'GET', '/schedule/name/access-schedule')).status).toBe(404);

    // Created clean, then updated with a refused setting.
    const ok = await call(h, 'POST', '/schedule', form({ ...scheduleFields, cron: '0 3 * * *' }, app));
    expect(ok.status).toBe(200);
    const u = await call(h, 'PUT', `/schedule/${ok.body.scheduleId}`, form({ jobConfig: template }));
    expect(u.status).toBe(409);
    expect(u.body.message).toContain('spark.kubernetes.executor.podTemplateFile');
    expect((await call(h, 'GET', `/schedule/${ok.body.scheduleId}`)).body.jobConfig).toEqual({});

    const grp = await call(
      h,
      'POST',
      '/group',
      form({ name: 'access-clean', language: 'PYTHON', clusterName: 'strict' }, app),
    );
    expect(grp.status).toBe(200);
    const gu = await call(h, 'PUT', `/group/${grp.body.groupId}`, form({ jobConfig: hostPath }));
    expect(gu.status).toBe(409);
    expect((await call(h, 'GET', `/group/${grp.body.groupId}`)).body.jobConfig).toEqual({});
  });

  it('refuses them in Livy sessions and batches (conf)', async () => {
    const conf = { 'spark.kubernetes.driver.secrets.spark-orchestrator': '/mnt/s' };
    const session = await livyPost('/sessions', { kind: 'pyspark', clusterName: 'strict', conf });
    expect(session.status).toBe(409);
    expect(session.body.msg).toContain('spark.kubernetes.driver.secrets.spark-orchestrator');
    const batch = await livyPost('/batches', { file: livyMain, clusterName: 'strict', conf });
    expect(batch.status).toBe(409);
    expect(batch.body.message).toContain('spark.kubernetes.driver.secrets.spark-orchestrator');
  });

  it("refuses them in the cluster's own defaults, unless the cluster allows their kind", async () => {
    const defaults =
      'spark.eventLog.enabled=false\nspark.kubernetes.authenticate.driver.serviceAccountName=spark-orchestrator';
    const refused = await call(h, 'POST', '/cluster', cluster('defaults', { defaultApplicationConfig: defaults }));
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(
      /^defaultApplicationConfig: spark\.kubernetes\.authenticate\.driver\.serviceAccountName/,
    );
    expect(await clusterNamed('defaults')).toBeNull();

    const created = await call(
      h,
      'POST',
      '/cluster',
      cluster('defaults', { defaultApplicationConfig: defaults, allowedAccessSettings: ['serviceAccount'] }),
    );
    expect(created.status).toBe(200);
    const id = created.body.clusterId;
    expect((await call(h, 'GET', `/cluster/${id}`)).body.allowedAccessSettings).toEqual(['serviceAccount']);
    // Taking the allowance back while the defaults still use it is refused; the cluster stays as it was.
    const narrowed = await call(h, 'PUT', `/cluster/${id}`, { allowedAccessSettings: [] });
    expect(narrowed.status).toBe(409);
    expect(narrowed.body.message).toContain('spark.kubernetes.authenticate.driver.serviceAccountName');
    expect((await call(h, 'GET', `/cluster/${id}`)).body.allowedAccessSettings).toEqual(['serviceAccount']);

    // An unknown kind, and the setting on a local cluster, are refused too.
    const unknown = await call(
      h,
      'POST',
      '/cluster',
      cluster('unknown-kind', { allowedAccessSettings: ['everything'] }),
    );
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.status).toBeLessThan(500);
    expect(JSON.stringify(unknown.body)).toContain('allowedAccessSettings');
    const local = await call(h, 'POST', '/cluster', {
      name: 'local-access',
      type: 'local',
      allowedAccessSettings: ['volumes'],
    });
    expect(local.status).toBeGreaterThanOrEqual(400);
    expect(local.status).toBeLessThan(500);
    expect(local.body.message).toContain('allowedAccessSettings');
  });

  it('refuses an SQL engine of a cluster whose stored defaults (from before the rule) hold one', async () => {
    const r = await call(h, 'POST', '/cluster', cluster('legacy'));
    expect(r.status).toBe(200);
    // As a cluster stored before the rule existed would be.
    await h.store.col(Collections.clusters).updateOne({ _id: r.body.clusterId } as never, {
      $set: { defaultApplicationConfig: 'spark.kubernetes.executor.volumes.hostPath.r.options.path=/' },
    });
    const e = await call(h, 'POST', `/sql/engine/${r.body.clusterId}`, { type: 'SPARK_SQL', async: true });
    expect(e.status).toBe(409);
    expect(e.body.message).toMatch(/^defaultApplicationConfig: spark\.kubernetes\.executor\.volumes\.hostPath/);
    const d = await call(h, 'POST', '/job/submit', jobForm('legacy', 'spark.sql.shuffle.partitions=2'));
    expect(d.status).toBe(200);
  });

  it('the adapter refuses them too, for what was stored before (InvalidSpec, no pod)', async () => {
    const adapter = createK8sAdapter({
      cluster: { name: 'strict', url: k8s.url, username: 'admin', password: 'k8s-password' },
      config: { K8S_SPARK_IMAGE: 'apache/spark:3.5.7-python3', K8S_NAMESPACE: 'default', ARTIFACT_DIR: '/srv/a' },
    });
    const pods = k8s.state.pods.size;
    await expect(
      adapter.launch({
        driverId: 'job-stored-1',
        role: 'application',
        env: {},
        labels: {},
        spark: sparkSpec({
          name: 'stored',
          language: 'SCALA',
          clusterName: 'strict',
          jobClass: 'org.example.Main',
          jobConfig: { 'spark.kubernetes.executor.volumes.hostPath.root.mount.path': '/host' },
          artifacts: { jars: ['local:///opt/spark/examples/jars/spark-examples.jar'], files: [], pyFiles: [] },
        }),
      }),
    ).rejects.toThrow(/jobConfig: spark\.kubernetes\.executor\.volumes\.hostPath\.root\.mount\.path/);
    expect(k8s.state.pods.size).toBe(pods);
  });
});

describe('on a cluster that allows them', () => {
  it('a job with an allowed secret and service account runs, the pod carrying them; other kinds stay refused', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      jobForm(
        'lenient',
        'spark.kubernetes.executor.secrets.app-creds=/mnt/creds;spark.kubernetes.authenticate.driver.serviceAccountName=spark-driver',
      ),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const pod = await eventually(async () => podsOf('spark-orchestrator.io/job-id', r.body.jobId)[0], 30_000, 50);
    expect(pod.spec.serviceAccountName).toBe('spark-driver');
    expect(pod.spec.containers[0].args).toContain('spark.kubernetes.executor.secrets.app-creds=/mnt/creds');

    const volume = await call(
      h,
      'POST',
      '/job/submit',
      jobForm('lenient', 'spark.kubernetes.executor.volumes.hostPath.root.mount.path=/host'),
    );
    expect(volume.status).toBe(409);
    expect(volume.body.message).toContain("Cluster 'lenient' does not allow it");
  });

  it('a group started under the allowance is not rescaled once the allowance is taken back', async () => {
    const g = await call(
      h,
      'POST',
      '/group',
      form(
        {
          name: 'allowed-group',
          language: 'PYTHON',
          clusterName: 'lenient',
          jobConfig: 'spark.kubernetes.authenticate.driver.serviceAccountName=spark-driver',
        },
        app,
      ),
    );
    expect(g.status, JSON.stringify(g.body)).toBe(200);
    const id = (await clusterNamed('lenient'))!._id;
    const narrowed = await call(h, 'PUT', `/cluster/${id}`, { allowedAccessSettings: ['secrets'] });
    expect(narrowed.status).toBe(200);
    const rescale = await call(h, 'POST', `/group/${g.body.groupId}/rescale/2`);
    expect(rescale.status).toBe(409);
    expect(rescale.body.message).toContain('spark.kubernetes.authenticate.driver.serviceAccountName');
    await call(h, 'PUT', `/cluster/${id}`, { allowedAccessSettings: ['secrets', 'serviceAccount'] });
  });
});
