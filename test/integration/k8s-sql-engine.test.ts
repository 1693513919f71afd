// SQL engines through the k8s adapter against the fake API server (testkit/fake-k8s.ts), which
// validates every manifest against the Kubernetes schema and plays pod phases. The fake serves pods,
// services and secrets; TRINO engines also need ConfigMaps, which a small front here serves the same
// way (schema-checked, 409 on a second create, 404 for a missing one) and passes the rest through.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Service } from 'kubernetes-models/v1/Service';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { k8sNames, Labels } from '../../activities/adapters/k8s/names';
import type { K8sCluster } from '../../activities/adapters/k8s/options';
import type { ClusterAdapter, DriverSpec } from '../../domain/driver';
import { sqlEngineDriverId, type SqlEngine } from '../../domain/sql-engine';
import { startFakeK8s, type FakeK8s, type KObject } from '../../testkit/fake-k8s';

const NS = 'sql-engines';
const config = { K8S_SPARK_IMAGE: 'apache/spark:3.5.7-python3', K8S_NAMESPACE: NS, ARTIFACT_DIR: '/srv/artifacts' };
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

interface Front {
  url: string;
  configMaps: Map<string, KObject>;
  /** While set, every ConfigMap request is 403 Forbidden, as where the service's role grants none. */
  forbidden: boolean;
  stop(): Promise<void>;
}

const send = (res: http.ServerResponse, code: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
};
const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
});

/** ConfigMaps of the core/v1 API in front of the fake; every other request goes to the fake unchanged. */
async function startConfigMapFront(fake: FakeK8s): Promise<Front> {
  const configMaps = new Map<string, KObject>();
  const front: Front = { url: '', configMaps, forbidden: false, stop: async () => undefined };
  const configMap = (method: string, ns: string, name: string | undefined, body: KObject, res: http.ServerResponse) => {
    if (front.forbidden) return send(res, 403, status(403, 'Forbidden', 'configmaps is forbidden'));
    if (method === 'POST' && name === undefined) {
      const o: KObject = {
        ...body,
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { ...body.metadata, namespace: ns },
      };
      const n = String(o.metadata.name ?? '');
      try {
        new ConfigMap(o as never).validate();
        if (!DNS1123_SUBDOMAIN.test(n) || n.length > 253)
          throw new Error(`metadata.name: '${n}' must be a DNS-1123 subdomain`);
        for (const k of Object.keys(o.data ?? {}))
          if (!/^[-._a-zA-Z0-9]+$/.test(k)) throw new Error(`data[${k}]: invalid key`);
      } catch (e) {
        return send(res, 422, status(422, 'Invalid', `ConfigMap "${n}" is invalid: ${(e as Error).message}`));
      }
      if (configMaps.has(`${ns}/${n}`))
        return send(res, 409, status(409, 'AlreadyExists', `configmaps "${n}" already exists`));
      configMaps.set(`${ns}/${n}`, o);
      return send(res, 201, o);
    }
    const o = name === undefined ? undefined : configMaps.get(`${ns}/${name}`);
    if (!o) return send(res, 404, status(404, 'NotFound', `configmaps "${name}" not found`));
    if (method === 'DELETE') configMaps.delete(`${ns}/${name}`);
    return send(res, 200, o);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://front');
      const m = /^\/api\/v1\/namespaces\/([^/]+)\/configmaps(?:\/([^/]+))?$/.exec(url.pathname);
      if (m) return configMap(req.method ?? 'GET', m[1], m[2], raw.length ? JSON.parse(raw.toString('utf8')) : {}, res);
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => k === 'content-type' || k === 'authorization'),
      ) as Record<string, string>;
      fetch(`${fake.url}${req.url}`, { method: req.method, headers, body: raw.length ? raw : undefined })
        .then(async (r) => {
          const text = Buffer.from(await r.arrayBuffer());
          res.writeHead(r.status, {
            'Content-Type': r.headers.get('content-type') ?? 'application/json',
            'Content-Length': text.length,
          });
          res.end(text);
        })
        .catch((e: unknown) => send(res, 502, status(502, 'BadGateway', String(e))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  front.stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return front;
}

const cluster = (url: string): K8sCluster => ({
  name: 'k8s-sql',
  url,
  sparkStorage: 'minio',
  storages: { minio: { sparkBucket: 'spark-bucket', endpoint: 'http://minio:9000', accessKey: 'AK', secretKey: 'SK' } },
});

function spec(type: SqlEngine, generation = 1): DriverSpec {
  return {
    driverId: sqlEngineDriverId('k8s-sql', type, generation),
    role: 'sql-engine',
    engine: { type, stateKey: 'k8s-sql' },
    env: {},
    labels: {},
    spark: {
      name: `${type} engine`,
      language: 'SCALA',
      clusterName: 'k8s-sql',
      args: [],
      jobConfig: {},
      pyRequirements: [],
      packages: [],
      memorySettings: { dynamicAllocation: false },
      artifacts: { jars: [], files: [], pyFiles: [] },
      tags: {},
    },
  };
}

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('k8s adapter: SQL engines against the fake API server', () => {
  let fake: FakeK8s;
  let front: Front;
  let adapter: ClusterAdapter;
  const keys = (m: Map<string, unknown>) => [...m.keys()].sort();

  beforeEach(async () => {
    fake = await startFakeK8s({ phases: { pendingMs: 30, runMs: null } });
    front = await startConfigMapFront(fake);
    adapter = createK8sAdapter({ cluster: cluster(front.url), config });
  });
  afterEach(async () => {
    await front.stop();
    await fake.stop();
  });

  it('SPARK_SQL: a driver pod with the headless service, the secret and a ClusterIP service on 10000', async () => {
    const s = spec('SPARK_SQL');
    const n = k8sNames(s.driverId);
    const first = await adapter.launch(s);
    expect(first.phase).toBe('PENDING');
    expect(first.endpoint).toBeUndefined();
    expect(keys(fake.state.pods)).toEqual([`${NS}/${n.pod}`]);
    expect(keys(fake.state.services)).toEqual([`${NS}/${n.engineService}`, `${NS}/${n.service}`].sort());
    expect(keys(fake.state.secrets)).toEqual([`${NS}/${n.secret}`]);
    expect(front.configMaps.size).toBe(0);

    const pod = fake.state.pods.get(`${NS}/${n.pod}`)!;
    const svc = fake.state.services.get(`${NS}/${n.engineService}`)!;
    expect(() => new Pod(pod as never).validate()).not.toThrow();
    expect(() => new Service(svc as never).validate()).not.toThrow();
    expect(svc.spec).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'thrift', port: 10000, targetPort: 10000 }] });
    // The service selects the engine's pod by labels the pod has.
    for (const [k, v] of Object.entries(svc.spec.selector as Record<string, string>))
      expect(pod.metadata.labels[k]).toBe(v);
    expect(pod.spec.containers[0].args).toContain('org.apache.spark.sql.hive.thriftserver.HiveThriftServer2');

    await waitFor(async () => (await adapter.status(s.driverId)).phase === 'RUNNING');
    const endpoint = { host: `${n.engineService}.${NS}.svc`, port: 10000 };
    expect(await adapter.status(s.driverId)).toMatchObject({ phase: 'RUNNING', appId: n.appId, endpoint });
    // A retried launch finds the same pod and reports the same endpoint.
    expect(await adapter.launch(s)).toMatchObject({ phase: 'RUNNING', endpoint });
    expect(fake.state.pods.size).toBe(1);

    fake.setPhase(NS, n.pod, 'Failed', { exitCode: 1 });
    expect(await adapter.status(s.driverId)).not.toHaveProperty('endpoint');
  });

  it('TRINO: a Trino pod, its ConfigMap, a ClusterIP service on 8080; its log is the Trino container', async () => {
    const s = spec('TRINO');
    const n = k8sNames(s.driverId);
    await adapter.launch(s);
    expect(keys(fake.state.pods)).toEqual([`${NS}/${n.pod}`]);
    expect(keys(fake.state.services)).toEqual([`${NS}/${n.engineService}`]);
    expect(fake.state.secrets.size).toBe(0);
    expect(keys(front.configMaps)).toEqual([`${NS}/${n.configMap}`]);
    const pod = fake.state.pods.get(`${NS}/${n.pod}`)!;
    expect(pod.spec.containers[0]).toMatchObject({ name: 'trino', image: 'trinodb/trino:368' });
    expect(pod.spec.volumes[0].configMap.name).toBe(n.configMap);
    expect(Object.keys(front.configMaps.get(`${NS}/${n.configMap}`)!.data).sort()).toEqual([
      'catalog.memory.properties',
      'catalog.tpch.properties',
      'config.properties',
      'jvm.config',
      'node.properties',
    ]);

    await waitFor(async () => (await adapter.status(s.driverId)).phase === 'RUNNING');
    expect((await adapter.status(s.driverId)).endpoint).toEqual({ host: `${n.engineService}.${NS}.svc`, port: 8080 });
    // Launching again creates nothing: every create answers 409 and the pod is read instead.
    await adapter.launch(s);
    expect(fake.state.pods.size + fake.state.services.size + front.configMaps.size).toBe(3);

    fake.setLogs(NS, n.pod, ['INFO main io.trino.server.Server ======== SERVER STARTED ========']);
    const [entry] = await adapter.logs(s.driverId, { from: 0, size: 10 });
    expect(entry).toMatchObject({
      name: n.pod,
      role: 'driver',
      state: 'Running',
      log: ['INFO main io.trino.server.Server ======== SERVER STARTED ========'],
    });
    const logRequest = fake.requests.find((r) => r.path.endsWith(`/pods/${n.pod}/log`));
    expect(logRequest?.query.container).toBe('trino');
  });

  it('remove deletes pod, services, secret and ConfigMap of one engine, not others; again is a no-op', async () => {
    const [gone, kept] = [spec('TRINO', 1), spec('SPARK_SQL', 1)];
    await adapter.launch(gone);
    await adapter.launch(kept);
    await adapter.remove(gone.driverId);
    const k = k8sNames(kept.driverId);
    expect(keys(fake.state.pods)).toEqual([`${NS}/${k.pod}`]);
    expect(keys(fake.state.services)).toEqual([`${NS}/${k.engineService}`, `${NS}/${k.service}`].sort());
    expect(front.configMaps.size).toBe(0);
    await adapter.remove(kept.driverId);
    expect(fake.state.pods.size + fake.state.services.size + fake.state.secrets.size + front.configMaps.size).toBe(0);
    await expect(adapter.remove(kept.driverId)).resolves.toBeUndefined();
    expect(await adapter.status(gone.driverId)).toEqual({ phase: 'MISSING' });
  });

  it('without rights to ConfigMaps, other drivers are still removed; a TRINO launch fails as forbidden', async () => {
    front.forbidden = true;
    const app: DriverSpec = {
      ...spec('SPARK_SQL'),
      driverId: 'job-plain-1',
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
    expect(fake.state.pods.size + fake.state.services.size + fake.state.secrets.size).toBe(0);
    await expect(adapter.launch(spec('TRINO'))).rejects.toThrow(/create configmap .*HTTP 403 Forbidden/);
  });

  it('labels every object of an engine for operators, and keeps its executors out of its service', async () => {
    const s = spec('SPARK_SQL');
    const n = k8sNames(s.driverId);
    await adapter.launch(s);
    for (const o of [fake.state.pods.get(`${NS}/${n.pod}`)!, fake.state.services.get(`${NS}/${n.engineService}`)!]) {
      expect(o.metadata.labels).toMatchObject({
        [Labels.ROLE]: 'sql-engine',
        [Labels.ENGINE]: 'SPARK_SQL',
        [Labels.DRIVER_ID]: n.base,
      });
    }
    // What Spark creates for an executor of this engine: it carries the driver-id label but not the role.
    const executor = fake.addPod(NS, {
      metadata: { name: `${n.base}-exec-1`, labels: { [Labels.DRIVER_ID]: n.base, 'spark-role': 'executor' } },
      spec: { containers: [{ name: 'spark-kubernetes-executor', image: config.K8S_SPARK_IMAGE }] },
    });
    const selector = fake.state.services.get(`${NS}/${n.engineService}`)!.spec.selector as Record<string, string>;
    expect(Object.entries(selector).every(([key, v]) => executor.metadata.labels[key] === v)).toBe(false);
  });
});
