// SQL engines through the k8s adapter against the real kube-apiserver (testkit/kube): the chart's RBAC and its
// service account's token, real validation and admission of every object (ConfigMaps of TRINO engines included),
// and the kubelet stand-in running the pods and serving their logs through pods/log.
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { k8sNames, Labels } from '../../activities/adapters/k8s/names';
import type { K8sCluster } from '../../activities/adapters/k8s/options';
import type { DriverSpec } from '../../domain/driver';
import { sqlEngineDriverId, type SqlEngine } from '../../domain/sql-engine';
import { installChartRbac, helmAvailable, tokenWithout, type ChartRelease } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startKubelet, type Kubelet, type PodPlan } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import { until } from '../../testkit/wait';
import { sparkSpec } from '../../testkit/spark-spec';

const ready = k8sAvailable() && helmAvailable();
const IMAGE = 'apache/spark:3.5.7-python3';

let cp: ControlPlaneInfo;
let release: ChartRelease;
let kubelet: Kubelet;
let NS: string;
/** What the kubelet does with a pod, by its name; default: running with one line. */
const plans = new Map<string, PodPlan>();

beforeAll(async () => {
  if (!ready) return;
  cp = await sharedControlPlane(inject('testDir'));
  release = await installChartRbac(cp, 'sqleng', 'sqleng-rel');
  NS = release.driverNamespace;
  kubelet = await startKubelet({
    cp,
    nodeName: 'node-sqleng',
    namespaces: [NS],
    dir: `${inject('testDir')}/kubelet-sqleng`,
    plan: (p) => plans.get(p.metadata!.name!) ?? { hold: ['engine up'] },
  });
}, K8S_SETUP_TIMEOUT_MS);
afterAll(async () => {
  await kubelet?.stop();
});

const admin = (method: string, p: string, body?: unknown) => kubeRequest(cp, cp.adminToken, method, p, body);
const get = (p: string) => admin('GET', `/api/v1/namespaces/${NS}/${p}`);
const adapterWith = (token = release.token) => {
  const cluster: K8sCluster = {
    name: 'k8s-sql',
    url: cp.url,
    caCert: cp.caCert,
    token,
    sparkStorage: 'minio',
    storages: {
      minio: { sparkBucket: 'spark-bucket', endpoint: 'http://minio:9000', accessKey: 'AK', secretKey: 'SK' },
    },
  };
  return createK8sAdapter({
    cluster,
    config: { K8S_SPARK_IMAGE: IMAGE, K8S_NAMESPACE: NS, ARTIFACT_DIR: '/srv/artifacts' },
  });
};

function spec(type: SqlEngine, generation = 1): DriverSpec {
  return {
    driverId: sqlEngineDriverId('k8s-sql', type, generation),
    role: 'sql-engine',
    engine: { type, stateKey: 'k8s-sql' },
    env: {},
    labels: {},
    spark: sparkSpec({ name: `${type} engine`, language: 'SCALA', clusterName: 'k8s-sql' }),
  };
}

/** Names of the objects of a kind labelled with the driver (its base name). */
async function named(kind: 'pods' | 'services' | 'secrets' | 'configmaps', base: string): Promise<string[]> {
  const r = await get(`${kind}?labelSelector=${encodeURIComponent(`${Labels.DRIVER_ID}=${base}`)}`);
  expect(r.status).toBe(200);
  return (r.body.items as { metadata: { name: string } }[]).map((o) => o.metadata.name).sort();
}
const allOf = async (base: string) =>
  (await Promise.all((['pods', 'services', 'secrets', 'configmaps'] as const).map((k) => named(k, base)))).flat();
const gone = (base: string) =>
  until(`no objects of ${base}`, async () => (await allOf(base)).length === 0, 30_000).then(() => undefined);

describe.skipIf(!ready)('k8s adapter: SQL engines against a real API server', () => {
  afterEach(async () => {
    await admin('DELETE', `/api/v1/namespaces/${NS}/pods?gracePeriodSeconds=0`);
  });

  it('SPARK_SQL: a driver pod with the headless service, the secret and a ClusterIP service on 10000', async () => {
    const adapter = adapterWith();
    const s = spec('SPARK_SQL', 11);
    const n = k8sNames(s.driverId);
    // Ends with exit code 1 a while after it started.
    plans.set(n.pod, { hold: ['thrift server up'], exitAfterMs: 4000, exitCode: 1 });
    const first = await adapter.launch(s);
    expect(first.phase).toBe('PENDING');
    expect(first.endpoint).toBeUndefined();
    expect(await named('pods', n.base)).toEqual([n.pod]);
    expect(await named('services', n.base)).toEqual([n.engineService, n.service].sort());
    expect(await named('secrets', n.base)).toEqual([n.secret]);
    expect(await named('configmaps', n.base)).toEqual([]);

    const pod = (await get(`pods/${n.pod}`)).body as V1Pod;
    const svc = (await get(`services/${n.engineService}`)).body as V1Service;
    expect(svc.spec).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'thrift', port: 10000, targetPort: 10000 }] });
    // The service selects the engine's pod by labels the pod has.
    for (const [k, v] of Object.entries(svc.spec!.selector!)) expect(pod.metadata!.labels![k]).toBe(v);
    expect(pod.spec!.containers[0].args).toContain('org.apache.spark.sql.hive.thriftserver.HiveThriftServer2');

    await until('running', async () => (await adapter.status(s.driverId)).phase === 'RUNNING', 20_000);
    const endpoint = { host: `${n.engineService}.${NS}.svc`, port: 10000 };
    expect(await adapter.status(s.driverId)).toMatchObject({ phase: 'RUNNING', appId: n.appId, endpoint });
    // A retried launch finds the same pod and reports the same endpoint.
    expect(await adapter.launch(s)).toMatchObject({ phase: 'RUNNING', endpoint });
    expect(await named('pods', n.base)).toEqual([n.pod]);

    const failed = await until(
      'failed',
      async () => {
        const st = await adapter.status(s.driverId);
        return st.phase === 'FAILED' ? st : undefined;
      },
      20_000,
    );
    expect(failed).not.toHaveProperty('endpoint');
    await adapter.remove(s.driverId);
    await gone(n.base);
  });

  it('TRINO: a Trino pod, its ConfigMap, a ClusterIP service on 8080; its log is the Trino container', async () => {
    const adapter = adapterWith();
    const s = spec('TRINO', 12);
    const n = k8sNames(s.driverId);
    plans.set(n.pod, { hold: ['INFO main io.trino.server.Server ======== SERVER STARTED ========'] });
    await adapter.launch(s);
    expect(await named('pods', n.base)).toEqual([n.pod]);
    expect(await named('services', n.base)).toEqual([n.engineService]);
    expect(await named('secrets', n.base)).toEqual([]);
    expect(await named('configmaps', n.base)).toEqual([n.configMap]);
    const pod = (await get(`pods/${n.pod}`)).body as V1Pod;
    expect(pod.spec!.containers[0]).toMatchObject({ name: 'trino', image: 'trinodb/trino:368' });
    expect(pod.spec!.volumes![0].configMap!.name).toBe(n.configMap);
    expect(Object.keys((await get(`configmaps/${n.configMap}`)).body.data).sort()).toEqual([
      'catalog.memory.properties',
      'catalog.tpch.properties',
      'config.properties',
      'jvm.config',
      'node.properties',
    ]);

    await until('running', async () => (await adapter.status(s.driverId)).phase === 'RUNNING', 20_000);
    expect((await adapter.status(s.driverId)).endpoint).toEqual({ host: `${n.engineService}.${NS}.svc`, port: 8080 });
    // Launching again creates nothing: the pod is read instead.
    await adapter.launch(s);
    expect(await allOf(n.base)).toHaveLength(3);

    // Read through pods/log with the container `trino` (the API server refuses a container the pod lacks).
    const [entry] = await adapter.logs(s.driverId, { from: 0, size: 10 });
    expect(entry).toMatchObject({
      name: n.pod,
      role: 'driver',
      state: 'Running',
      log: ['INFO main io.trino.server.Server ======== SERVER STARTED ========'],
    });
    await adapter.remove(s.driverId);
    await gone(n.base);
  });

  it('remove deletes pod, services, secret and ConfigMap of one engine, not others; again is a no-op', async () => {
    const adapter = adapterWith();
    const [goneSpec, kept] = [spec('TRINO', 13), spec('SPARK_SQL', 13)];
    await adapter.launch(goneSpec);
    await adapter.launch(kept);
    await adapter.remove(goneSpec.driverId);
    await gone(k8sNames(goneSpec.driverId).base);
    const k = k8sNames(kept.driverId);
    expect(await named('pods', k.base)).toEqual([k.pod]);
    expect(await named('services', k.base)).toEqual([k.engineService, k.service].sort());
    await adapter.remove(kept.driverId);
    await gone(k.base);
    await expect(adapter.remove(kept.driverId)).resolves.toBeUndefined();
    expect(await adapter.status(goneSpec.driverId)).toEqual({ phase: 'MISSING' });
  });

  it('without rights to ConfigMaps, other drivers are still removed; a TRINO launch fails as forbidden', async () => {
    const adapter = adapterWith(await tokenWithout(cp, release, NS, 'configmaps', ['create', 'delete']));
    const app: DriverSpec = {
      ...spec('SPARK_SQL'),
      driverId: 'job-plain-sqleng-1',
      role: 'application',
      engine: undefined,
      spark: {
        ...spec('SPARK_SQL').spark,
        jobClass: 'org.example.Pi',
        artifacts: { jars: ['https://repo/pi.jar'], files: [], pyFiles: [] },
      },
    };
    await adapter.launch(app);
    await expect(adapter.remove(app.driverId)).resolves.toBeUndefined();
    await gone(k8sNames(app.driverId).base);
    await expect(adapter.launch(spec('TRINO', 14))).rejects.toThrow(/create configmap .*HTTP 403 Forbidden/);
    // Its pod went first and stays Pending without its ConfigMap; the chart's rights remove it.
    await adapterWith().remove(spec('TRINO', 14).driverId);
    await gone(k8sNames(spec('TRINO', 14).driverId).base);
  });

  it('labels every object of an engine for operators, and keeps its executors out of its service', async () => {
    const adapter = adapterWith();
    const s = spec('SPARK_SQL', 15);
    const n = k8sNames(s.driverId);
    await adapter.launch(s);
    for (const p of [`pods/${n.pod}`, `services/${n.engineService}`])
      expect((await get(p)).body.metadata.labels).toMatchObject({
        [Labels.ROLE]: 'sql-engine',
        [Labels.ENGINE]: 'SPARK_SQL',
        [Labels.DRIVER_ID]: n.base,
      });
    // What Spark creates for an executor of this engine: it carries the driver-id label but not the role.
    const executor = await admin('POST', `/api/v1/namespaces/${NS}/pods`, {
      metadata: { name: `${n.base}-exec-1`, labels: { [Labels.DRIVER_ID]: n.base, 'spark-role': 'executor' } },
      spec: { containers: [{ name: 'spark-kubernetes-executor', image: IMAGE }] },
    });
    expect(executor.status).toBe(201);
    const selector = (await get(`services/${n.engineService}`)).body.spec.selector as Record<string, string>;
    const labels = executor.body.metadata.labels as Record<string, string>;
    expect(Object.entries(selector).every(([key, v]) => labels[key] === v)).toBe(false);
    await adapter.remove(s.driverId);
    await gone(n.base);
  });
});
