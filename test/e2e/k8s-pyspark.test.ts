// A PySpark job on "Kubernetes" from submit to FINISHED, for real: the real API server (testkit/kube) with the
// chart's RBAC, the service holding only its account's token, artifacts in moto. The kubelet stand-in runs
// the driver pod's spark-submit as generated (client mode, Spark's Kubernetes backend), changing only what
// a laptop cannot be: the API server's address, the pod's mounted token and CA as files, the driver's
// address and ports (127.0.0.1), and the image's jars (pyspark's, plus hadoop-aws from the setup cache).
// Spark's backend then creates its executor pods through the API server as the drivers' service account;
// the kubelet runs them as Spark's image would (KubernetesExecutorBackend) and they do the work. The job's
// logs, driver and executors, are read through the API server while they run and from the saved copy after.
// Last, the cluster adapter contract (testkit/adapter-contract.ts) against the same API server and kubelet: jobs,
// a group's runner pod, the SPARK_SQL engine's pod (reached at its pod's IP, as its Service would route), a
// broken cluster.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAdapterRegistry, type AdapterLookup } from '../../activities/adapters/registry';
import type { ClusterAdapter } from '../../domain/driver';
import { loadConfig } from '../../lib/config';
import { adapterContract, contractSpec, TEST_JVM_OPTIONS } from '../../testkit/adapter-contract';
import { historyServerCommand } from '../../scripts/history-server';
import { freePort } from '../../testkit/servers';
import { helmAvailable, installChartRbac, type ChartRelease } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startKubelet, type Kubelet, type PodContext, type PodPlan } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import { motoAvailable, type MotoServer } from '../../testkit/moto';
import { call, eventually, form, startHarness, type Harness } from '../harness';
import { startStorage } from '../integration/broken-fixture';

const CACHE =
  process.env.SPARK_ORCH_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? '/root', '.cache'), 'spark-orchestrator');
const S3A_JARS = path.join(CACHE, 'hadoop-aws-3.3.4');
const ready =
  k8sAvailable() && helmAvailable() && motoAvailable() && existsSync(path.join(S3A_JARS, 'hadoop-aws-3.3.4.jar'));
const local = loadConfig({ ...process.env });
const JAVA_HOME = process.env.JAVA_HOME || '/usr/lib/jvm/java-17-openjdk-amd64';
const ROOT = path.resolve(import.meta.dirname, '../..');

let cp: ControlPlaneInfo;
let release: ChartRelease;
let kubelet: Kubelet;
let storage: MotoServer;
let h: Harness;
let NS: string;
let historyServer: ChildProcess | undefined;

/**
 * Each driver pod's own IP: a loopback address of its own stands for the pod network, so its Spark UI listens
 * on the manifest's port (4040) as in a pod, and the API reaches it at the IP the API server reports.
 */
let pods = 0;
const nextPodIP = () => `127.0.${Math.floor(++pods / 250) + 10}.${(pods % 250) + 2}`;

/** The driver pod's spark-submit, run by the kubelet with what a laptop needs instead of a cluster. */
function plan(_pod: V1Pod, ctx: PodContext): PodPlan {
  const podIP = nextPodIP();
  return {
    run: {
      podIP,
      sparkHome: local.SPARK_HOME,
      conf: {
        // Spark's Kubernetes backend in the driver (submitInDriver): where the API server is, the pod's
        // mounted service-account token and the cluster's CA.
        'spark.kubernetes.driver.master': ctx.apiServer,
        'spark.kubernetes.authenticate.driver.mounted.oauthTokenFile': ctx.tokenFile!,
        'spark.kubernetes.authenticate.driver.mounted.caCertFile': ctx.caFile,
        'spark.driver.host': podIP,
        'spark.driver.port': String(ctx.ports[0]),
        'spark.driver.blockManager.port': String(ctx.ports[1]),
        'spark.driver.extraClassPath': `${S3A_JARS}/*`,
      },
      paths: {
        // The driver image's runner (group instances): this repository's.
        '/opt/spark-orchestrator/runner/': path.join(ROOT, 'runner') + '/',
        // An SQL engine's Thrift Server listens on the pod's own address (every address of a pod's own network),
        // and keeps its Derby metastore and statement logs in a folder of the pod's own (the image's /tmp).
        'hive.server2.thrift.bind.host=0.0.0.0': `hive.server2.thrift.bind.host=${podIP}`,
        '/tmp/spark-sql': path.join(inject('testDir'), 'kubelet-pyspark', `spark-sql-${podIP}`),
      },
      // Spark's UI listens on SPARK_LOCAL_IP, else on every address: here the pod's, as in its own network.
      env: { PYSPARK_PYTHON: local.PYTHON, PYSPARK_DRIVER_PYTHON: local.PYTHON, JAVA_HOME, SPARK_LOCAL_IP: podIP },
      timeoutMs: 300_000,
    },
  };
}

beforeAll(async () => {
  cp = await sharedControlPlane(inject('testDir'));
  [release, storage] = await Promise.all([installChartRbac(cp, 'pyspark', 'pyspark-release'), startStorage()]);
  NS = release.driverNamespace;
  kubelet = await startKubelet({
    cp,
    nodeName: 'node-pyspark',
    namespaces: [NS],
    // The adapter contract's drivers and executors side by side (each pod asks for a CPU).
    capacity: { cpu: 16, memoryMiB: 32 * 1024 },
    dir: path.join(inject('testDir'), 'kubelet-pyspark'),
    plan,
    executor: {
      sparkHome: local.SPARK_HOME,
      extraClassPath: `${S3A_JARS}/*`,
      env: { PYSPARK_PYTHON: local.PYTHON, JAVA_HOME },
    },
  });
  // The stack's History Server, which serves the event logs k8s drivers wrote to the storage, once removal
  // has copied them into its folder. Its log goes to a file.
  const historyDir = path.join(inject('testDir'), 'k8s-pyspark-history');
  mkdirSync(historyDir, { recursive: true });
  mkdirSync(path.join(inject('testDir'), 'k8s-pyspark-hs'), { recursive: true });
  const historyEnv = { SPARK_HISTORY_URL: `http://127.0.0.1:${await freePort()}`, SPARK_HISTORY_DIR: historyDir };
  const hs = historyServerCommand({
    config: loadConfig({ ...process.env, ...historyEnv }),
    runDir: path.join(inject('testDir'), 'k8s-pyspark-hs'),
    updateInterval: '1s',
  });
  const out = createWriteStream(path.join(historyDir, '..', 'k8s-pyspark-history.log'));
  historyServer = spawn(hs.cmd, hs.args, { env: hs.env, stdio: ['ignore', 'pipe', 'pipe'] });
  historyServer.stdout?.pipe(out);
  historyServer.stderr?.pipe(out);
  // The driver image (it holds hadoop-aws): no --packages download.
  h = await startHarness({
    env: { K8S_NAMESPACE: NS, K8S_SPARK_IMAGE: 'registry.example.com/spark-orchestrator-driver:test', ...historyEnv },
  });
  const c = await call(h, 'POST', '/cluster', {
    name: 'kube',
    type: 'k8s',
    url: cp.url,
    caCert: cp.caCert,
    token: release.token,
    // Runners in pods reach the tests' Temporal server (the pods are local processes here).
    temporalAddress: inject('temporalAddress'),
    sparkStorage: 'main',
    // Drivers run as the chart's drivers' account, which may create executor pods.
    // Less CPU on the drivers' and executors' JVM start-up (testkit/adapter-contract.ts).
    defaultApplicationConfig: [
      `spark.kubernetes.authenticate.driver.serviceAccountName=${release.driverServiceAccount}`,
      `spark.driver.extraJavaOptions=${TEST_JVM_OPTIONS}`,
      `spark.executor.extraJavaOptions=${TEST_JVM_OPTIONS}`,
    ].join(';'),
    allowedAccessSettings: ['serviceAccount'],
    storages: {
      main: {
        sparkBucket: 'spark',
        endpoint: storage.endpoint,
        region: 'us-east-1',
        accessKey: 'broken-access',
        secretKey: 'broken-secret',
      },
    },
  });
  expect(c.status, JSON.stringify(c.body)).toBe(200);
}, K8S_SETUP_TIMEOUT_MS);
afterAll(async () => {
  historyServer?.kill('SIGTERM');
  await h?.stop();
  await kubelet?.stop();
  await storage?.stop();
});

const APP = `import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
sc = spark.sparkContext
n = int(sys.argv[1])
parts = sc.parallelize(range(1, n + 1), 4)
total = parts.map(lambda x: x * x).sum()
# Which executors did the work: the host:executor-id of each partition's task.
from pyspark import TaskContext
import os
where = sorted(set(parts.mapPartitions(lambda _: [os.environ.get("SPARK_EXECUTOR_POD_NAME", "driver")]).collect()))
print(f"RESULT total={total} executors={','.join(where)}")
spark.stop()
`;

describe.skipIf(!ready)('a PySpark job on a real Kubernetes API server, with executors Spark creates', () => {
  // The two cases run side by side (it.concurrent), for the file's time.
  it.concurrent(
    'goes from submit to FINISHED; executor pods did the work; logs read through the API server',
    async () => {
      const t0 = Date.now();
      const r = await call(
        h,
        'POST',
        '/job/submit',
        form(
          { name: 'squares', language: 'PYTHON', jobClass: 'main', clusterName: 'kube', args: '1000', executors: '2' },
          { pyFiles: [{ name: 'main.py', content: APP }] },
        ),
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const id = r.body.jobId as string;
      // While it runs: executor pods exist, made by Spark, owned by the driver pod.
      const executors = await eventually(
        async () => {
          const x = await kubeRequest(
            cp,
            cp.adminToken,
            'GET',
            `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`spark-role=executor,spark-orchestrator.io/job-id=${id}`)}`,
          );
          const j = (await call(h, 'GET', `/job/${id}`)).body;
          if (['FAILED', 'FINISHED'].includes(j.state))
            throw Object.assign(new Error(`job ended: ${JSON.stringify(j)}`), { fatal: true });
          return x.body.items?.length === 2 ? (x.body.items as V1Pod[]) : undefined;
        },
        180_000,
        250,
      );
      for (const e of executors) expect(e.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Pod' });
      // The executors' own logs, through the API server and the node's log endpoint, while they exist (Spark
      // deletes its executor pods when the driver stops).
      const running = await eventually(
        async () => {
          const x = await call(h, 'GET', `/job/${id}/logs?logSize=200`);
          const ex = (x.body as { role: string; log: string[] }[]).filter((l) => l.role === 'executor');
          return ex.length === 2 && ex.every((l) => l.log.length > 0) ? ex : undefined;
        },
        60_000,
        250,
      );
      expect(running.map((l) => l.log.join('\n')).join('\n')).toMatch(/KubernetesExecutorBackend|Executor/);
      const done = await eventually(
        async () => {
          const j = (await call(h, 'GET', `/job/${id}`)).body;
          return ['FINISHED', 'FAILED'].includes(j.state) ? j : undefined;
        },
        240_000,
        500,
      );
      const logs = (await call(h, 'GET', `/job/${id}/logs?logSize=5000`)).body as {
        role: string;
        name: string;
        log: string[];
      }[];
      const driverLog = logs.find((l) => l.role === 'driver')?.log.join('\n') ?? '';
      expect(done.state, driverLog.slice(-3000)).toBe('FINISHED');
      const result = /RESULT total=(\d+) executors=(\S+)/.exec(driverLog);
      expect(result?.[1]).toBe(String((1000 * 1001 * 2001) / 6));
      // The tasks ran in the executor pods, not in the driver.
      expect(result?.[2].split(',').sort()).toEqual(executors.map((e) => e.metadata!.name!).sort());
      console.log(`k8s PySpark job with 2 executors: ${Date.now() - t0} ms submit → FINISHED and logs`);
      // Its run in the History Server: the event log the driver wrote to the storage (s3a), copied when its pods
      // were removed. Its stages are those of the job.
      expect(done.historyUrl).toBe(`/api/v1/job/${id}/history/`);
      const stages = await eventually(async () => {
        const x = await call(h, 'GET', `/job/${id}/history/api/v1/applications/${done.appId}/stages`);
        return x.status === 200 ? (x.body as { status: string; numTasks: number }[]) : undefined;
      }, 60_000);
      expect(stages.length).toBeGreaterThanOrEqual(2);
      expect(stages.every((st) => st.status === 'COMPLETE')).toBe(true);
      // Nothing of the job is left on the cluster.
      await eventually(async () => {
        const x = await kubeRequest(
          cp,
          cp.adminToken,
          'GET',
          `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`spark-orchestrator.io/job-id=${id}`)}`,
        );
        return x.body.items?.length === 0 ? true : undefined;
      }, 60_000);
    },
    420_000,
  );

  it.concurrent(
    'a PYTHON group on Kubernetes: its runner pod gets READY, executes a job class with its executors, and goes',
    async () => {
      const JOBS = `from pyspark.sql import SparkSession

class SquareSum:
    def run(self, spark: SparkSession, config):
        n = int(config.get("n", "10"))
        return str(spark.sparkContext.parallelize(range(1, n + 1), 2).map(lambda x: x * x).sum())
`;
      const r = await call(
        h,
        'POST',
        '/group',
        form(
          {
            name: 'k8s-warm',
            language: 'PYTHON',
            scale: '1',
            clusterName: 'kube',
            executors: '1',
            driverMemory: '512m',
          },
          { pyFiles: [{ name: 'jobs.py', content: JOBS }] },
        ),
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const groupId = r.body.groupId as string;
      const t0 = Date.now();
      await eventually(
        async () => {
          const g = (await call(h, 'GET', `/group/${groupId}?jobStates=SUBMITTED,STARTING,READY,BUSY,FAILED,UNKNOWN`))
            .body;
          const jobs = (g.jobs ?? []) as { state: string; error?: string }[];
          if (jobs.some((j) => j.state === 'FAILED'))
            throw Object.assign(new Error(`instance failed: ${JSON.stringify(jobs)}`), { fatal: true });
          return jobs.length === 1 && jobs[0].state === 'READY' ? true : undefined;
        },
        240_000,
        500,
      );
      const readyMs = Date.now() - t0;
      const x = await call(h, 'POST', `/group/${groupId}/job/execute`, {
        type: 'interactive_job_execute',
        jobClass: 'jobs.SquareSum',
        jobConfig: { n: '1000' },
      });
      expect(x.status, JSON.stringify(x.body)).toBe(200);
      expect(x.body.result).toBe(String((1000 * 1001 * 2001) / 6));
      // The runner's Spark asked for its executor through the API server, and it runs.
      const executors = await kubeRequest(
        cp,
        cp.adminToken,
        'GET',
        `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`spark-role=executor,spark-orchestrator.io/group-id=${groupId}`)}`,
      );
      expect(executors.body.items.map((p: V1Pod) => p.status?.phase)).toEqual(['Running']);
      console.log(`k8s PYTHON group: READY in ${readyMs} ms, an execution ${Date.now() - t0 - readyMs} ms`);
      // The runner's live Spark UI through the API: the driver pod's IP (as the API server reports it) on the
      // UI port, its stages those of the execution, its links under the API's path.
      const instance = (
        (await call(h, 'GET', `/group/${groupId}?jobStates=STARTING,READY,BUSY`)).body.jobs as {
          jobId: string;
          uiUrl?: string;
        }[]
      )[0];
      expect(instance, 'the READY instance').toBeDefined();
      expect(instance.uiUrl).toBe(`/api/v1/job/${instance.jobId}/ui/`);
      const apps = await call(h, 'GET', `/job/${instance.jobId}/ui/api/v1/applications`);
      expect(apps.status, JSON.stringify(apps.body)).toBe(200);
      const appId = (apps.body as { id: string }[])[0].id;
      const stages = await call(h, 'GET', `/job/${instance.jobId}/ui/api/v1/applications/${appId}/stages`);
      expect(stages.status).toBe(200);
      expect((stages.body as { status: string }[]).some((st) => st.status === 'COMPLETE')).toBe(true);
      const page = await fetch(`${h.url}/job/${instance.jobId}/ui/jobs/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`/api/v1/job/${instance.jobId}/ui/`);
      expect((await call(h, 'DELETE', `/group/${groupId}`)).status).toBe(200);
      await eventually(async () => {
        const left = await kubeRequest(
          cp,
          cp.adminToken,
          'GET',
          `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`spark-orchestrator.io/group-id=${groupId}`)}`,
        );
        return left.body.items?.length === 0 ? true : undefined;
      }, 60_000);
    },
    420_000,
  );
});

// The cluster adapter contract (testkit/adapter-contract.ts) on the same API server and kubelet: the adapter the
// service's registry builds for the stored cluster, and one of a cluster whose API server nobody listens for.
describe.skipIf(!ready)('the adapter contract on the real API server', () => {
  let lookup: AdapterLookup;
  beforeAll(async () => {
    const broken = await call(h, 'POST', '/cluster', {
      name: 'kube-broken',
      type: 'k8s',
      url: 'https://127.0.0.1:1',
      caCert: cp.caCert,
      token: release.token,
    });
    expect(broken.status, JSON.stringify(broken.body)).toBe(200);
    lookup = createAdapterRegistry(h.config, h.store);
  });
  /** The registry's adapter of the cluster, looked up on every call as the activities do. */
  const via = (name: string): ClusterAdapter => ({
    launch: async (spec) => (await lookup(name)).launch(spec),
    status: async (driverId) => (await lookup(name)).status(driverId),
    logs: async (driverId, range) => (await lookup(name)).logs(driverId, range),
    remove: async (driverId) => (await lookup(name)).remove(driverId),
  });
  /** Pods of a label selector in the drivers' namespace. */
  const podsOf = async (selector: string) =>
    (
      await kubeRequest(
        cp,
        cp.adminToken,
        'GET',
        `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(selector)}`,
      )
    ).body.items as V1Pod[];
  /** The engine's Service's selector, as `reach` found it. */
  let engineSelector = '';
  adapterContract(
    () => ({
      adapter: via('kube'),
      broken: via('kube-broken'),
      // In the artifact store, as an uploaded job's files are: the adapter ships them from there.
      // Only `ok` runs a Spark job: the others ask for no executor pod (Spark on Kubernetes takes 0, YARN does not).
      spec: (driverId, kind) =>
        contractSpec(path.join(h.config.ARTIFACT_DIR, 'k8s-contract'), driverId, kind, 'kube', {
          executors: kind === 'ok' ? 1 : 0,
          driverMemory: '512m',
          executorMemory: '512m',
        }),
      timeoutMs: 300_000,
      clusterName: 'kube',
      temporal: { address: h.config.TEMPORAL_ADDRESS, namespace: h.config.TEMPORAL_NAMESPACE },
      secretKey: h.config.SECRET_KEY,
      // What the cluster's DNS and the Service do: <service>.<namespace>.svc to the IP of the pod it selects.
      reach: async (endpoint) => {
        const [service, namespace] = endpoint.host.split('.');
        const svc = await kubeRequest(cp, cp.adminToken, 'GET', `/api/v1/namespaces/${namespace}/services/${service}`);
        expect(svc.status, svc.text).toBe(200);
        engineSelector = Object.entries(svc.body.spec.selector as Record<string, string>)
          .map(([k, v]) => `${k}=${v}`)
          .join(',');
        const pod = (await podsOf(engineSelector)).find((p) => p.status?.phase === 'Running');
        expect(pod?.status?.podIP, JSON.stringify(pod?.status)).toBeTruthy();
        return { host: pod!.status!.podIP!, port: Number(svc.body.spec.ports[0].targetPort) };
      },
      checks: {
        // Nothing of the runner is left: its pod, and the executor pod its Spark asked for.
        runnerRemoved: async (_driverId, ready) => {
          await eventually(async () => (await podsOf(`spark-orchestrator.io/job-id=${ready.instanceId}`)).length === 0);
        },
        engineRemoved: async () => {
          await eventually(async () => (await podsOf(engineSelector)).length === 0);
        },
      },
    }),
    'k8s-contract',
  );
});
