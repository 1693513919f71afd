// Spark Connect on a k8s cluster, end to end: the real pyspark 3.5.7 client → the gateway's TLS port with an API
// key → the cluster's Connect server, launched by its workflow as a driver pod through the real API server
// (testkit/kube, the chart's RBAC) and run by the kubelet stand-in as a local process with a loopback IP of its
// own for the pod's: the real SparkConnectServer with the manifest's arguments, changing only what a laptop
// cannot be (the image's jars mapped to the setup cache's, its master local[1] instead of executor pods, which
// test/e2e/k8s-pyspark.test.ts covers). The gateway reaches it at the pod IP the API server reports.
import path from 'node:path';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { CONNECT_POD_PORT, IMAGE_CONNECT_DIR, SECRET_SHA256_ENV } from '../../activities/adapters/k8s/connect-server';
import { k8sNames, Labels } from '../../activities/adapters/k8s/names';
import { connectInterceptorJar } from '../../activities/adapters/local/connect-server';
import { startConnectGateway, type RunningGateway } from '../../api/connect/gateway';
import type { ApiDeps } from '../../api/deps';
import { connectServerId, type ConnectServerRecord } from '../../domain/connect';
import { connectServerSecret } from '../../lib/driver-secret';
import { Collections } from '../../lib/mongo';
import { ConnectClient } from '../../testkit/connect-client';
import { helmAvailable, installChartRbac, type ChartRelease } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startKubelet, type Kubelet, type PodContext, type PodPlan } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import { call, eventually, startHarness, type Harness } from '../harness';

const ready = k8sAvailable() && helmAvailable();
const ADMIN_KEY = 'connect-k8s-admin-key-0123456789abcdef';
const JAVA_HOME = process.env.JAVA_HOME || '/usr/lib/jvm/java-17-openjdk-amd64';

let cp: ControlPlaneInfo;
let release: ChartRelease;
let kubelet: Kubelet;
let h: Harness;
let deps: ApiDeps;
let gw: RunningGateway;
let NS: string;
let clusterId: string;
let logFile: string;
const clients: ConnectClient[] = [];
/** Each pod's own loopback IP stands for its address on the pod network. */
let pods = 0;
const nextPodIP = () => `127.0.${Math.floor(++pods / 250) + 60}.${(pods % 250) + 2}`;

/** The server pod's spark-submit, run with what a laptop has instead of the image and a cluster. */
function plan(_pod: V1Pod, ctx: PodContext): PodPlan {
  const podIP = nextPodIP();
  return {
    run: {
      podIP,
      sparkHome: h.config.SPARK_HOME,
      flags: { '--master': 'local[1]' },
      conf: {
        'spark.driver.host': podIP,
        'spark.driver.port': String(ctx.ports[0]),
        'spark.driver.blockManager.port': String(ctx.ports[1]),
      },
      // The driver image's Connect jars: the server's from the setup cache, the interceptor as setup compiled it.
      paths: {
        [`${IMAGE_CONNECT_DIR}/spark-connect_2.12-3.5.7.jar`]: h.config.SPARK_CONNECT_JAR,
        [`${IMAGE_CONNECT_DIR}/connect-interceptor.jar`]: connectInterceptorJar(h.config),
      },
      env: { PYSPARK_PYTHON: h.config.PYTHON, JAVA_HOME, SPARK_LOCAL_IP: podIP },
      timeoutMs: 300_000,
    },
  };
}

beforeAll(async () => {
  if (!ready) return;
  cp = await sharedControlPlane(inject('testDir'));
  release = await installChartRbac(cp, 'connect', 'connect-release');
  NS = release.driverNamespace;
  kubelet = await startKubelet({
    cp,
    nodeName: 'node-connect',
    namespaces: [NS],
    dir: path.join(inject('testDir'), 'kubelet-connect'),
    plan,
  });
  h = await startHarness({
    env: {
      AUTH_MODE: 'on',
      AUTH_ADMIN_KEY: ADMIN_KEY,
      K8S_NAMESPACE: NS,
      K8S_SPARK_IMAGE: 'registry.example.com/spark-orchestrator-driver:test',
      CONNECT_START_TIMEOUT_MS: '120000',
    },
  });
  logFile = path.join(path.dirname(h.config.DRIVER_DIR), 'connect-k8s-clients.log');
  const c = await call(
    h,
    'POST',
    '/cluster',
    { name: 'kube', type: 'k8s', url: cp.url, caCert: cp.caCert, token: release.token },
    { authorization: `Bearer ${ADMIN_KEY}` },
  );
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  clusterId = c.body.clusterId as string;
  deps = { config: h.config, store: h.store, temporal: h.temporal };
  gw = await startConnectGateway(deps, { port: 0 });
}, K8S_SETUP_TIMEOUT_MS);

afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail')
    console.error(
      `--- the clients' output: ${logFile}; the server pods' logs: ${path.join(inject('testDir'), 'kubelet-connect')}`,
    );
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.close();
  await h?.stop();
  await kubelet?.stop();
});

describe.skipIf(!ready)('Spark Connect on a k8s cluster', () => {
  it('runs a query through the gateway on the server pod, reached at its pod IP; stopping the server deletes its pod', async () => {
    const admin = { authorization: `Bearer ${ADMIN_KEY}` };
    const client = new ConnectClient({ python: h.config.PYTHON, caFile: h.config.CONNECT_TLS_CERT, logFile });
    clients.push(client);
    expect((await client.connect(`${gw.url}/;token=${ADMIN_KEY};cluster=kube`)).ok).toBe(true);
    // The first call starts the cluster's server (its workflow launches the pod) and waits for it.
    expect(await client.value('result = [r.id for r in spark.range(5).collect()]')).toEqual([0, 1, 2, 3, 4]);
    expect(await client.value('result = spark.sql("select 1 + 1 as two").collect()[0]["two"]')).toBe(2);

    const server = (await h.store
      .col<ConnectServerRecord>(Collections.connectServers)
      .findOne({ _id: connectServerId(clusterId) } as never))!;
    expect(server.state).toBe('RUNNING');
    const n = k8sNames(server.driverId!);
    const pod = (await kubeRequest(cp, cp.adminToken, 'GET', `/api/v1/namespaces/${NS}/pods/${n.pod}`)).body as V1Pod;
    expect(pod.metadata?.labels?.[Labels.ROLE]).toBe('connect-server');
    // Reached at the pod's IP, which only the pod's status says.
    expect(server.endpoint).toEqual({ host: pod.status?.podIP, port: CONNECT_POD_PORT });
    // No service exposes the server's port: only the headless one of the driver's own ports.
    const services = (
      await kubeRequest(
        cp,
        cp.adminToken,
        'GET',
        `/api/v1/namespaces/${NS}/services?labelSelector=${encodeURIComponent(`${Labels.DRIVER_ID}=${n.base}`)}`,
      )
    ).body.items as V1Service[];
    expect(services.map((s) => s.metadata?.name)).toEqual([n.service]);
    expect(services[0].spec?.ports?.map((p) => p.port)).not.toContain(CONNECT_POD_PORT);
    // The pod holds only a hash of the server's secret, never the secret.
    const secret = connectServerSecret(h.config.SECRET_KEY!, server.driverId!);
    expect(JSON.stringify(pod)).not.toContain(secret);
    expect(pod.spec?.containers[0].env?.find((e) => e.name === SECRET_SHA256_ENV)?.value).toMatch(/^[0-9a-f]{64}$/);

    // A caller around the gateway, at the pod's address, has no secret: the server refuses it.
    await client.connect(`sc://${pod.status?.podIP}:${CONNECT_POD_PORT}`);
    const direct = await client.run('result = spark.range(1).count()');
    expect(direct).toMatchObject({ ok: false, code: 'StatusCode.UNAUTHENTICATED' });
    if (!direct.ok) expect(direct.message).toMatch(/only through the gateway/);
    await client.connect(`${gw.url}/;token=${ADMIN_KEY};cluster=kube`);
    expect(await client.value('result = spark.range(3).count()')).toBe(3);

    // Stopping the server deletes its pod; the session's next call says it has ended.
    const del = await call(h, 'DELETE', `/connect/server/${connectServerId(clusterId)}`, undefined, admin);
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    await eventually(
      async () =>
        (await kubeRequest(cp, cp.adminToken, 'GET', `/api/v1/namespaces/${NS}/pods/${n.pod}`)).status === 404,
      30_000,
    );
    const after = await client.run('result = spark.range(1).count()');
    expect(after).toMatchObject({ ok: false, code: 'StatusCode.FAILED_PRECONDITION' });
  }, 120_000);
});
