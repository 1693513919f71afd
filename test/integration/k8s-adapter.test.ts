// The k8s adapter. Launch, status, logs and remove against the real kube-apiserver (testkit/kube: the chart's RBAC, its
// service account's token, the kubelet stand-in): what it creates, as real validation and admission take it,
// logs through pods/log, what a removal leaves. Against the
// in-process fake API server (testkit/fake-k8s.ts) what needs faults or states injected on demand: image pull
// failures (no container runtime here), 5xx and hung servers, a record of exactly what was sent (no request before
// a refused spec), and basic auth (kube-apiserver removed it in 1.19). Client certificates run on the real API
// server: test/integration/k8s-client-cert.test.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { CLUSTER_UNAVAILABLE, K8sApiError } from '../../activities/adapters/k8s/errors';
import { buildKubeConfig } from '../../activities/adapters/k8s/kube-config';
import { buildDriverManifests } from '../../activities/adapters/k8s/manifests';
import { k8sNames, Labels } from '../../activities/adapters/k8s/names';
import {
  DEFAULT_RUNNER_PATH,
  HADOOP_AWS_PACKAGE,
  type K8sCluster,
  type ObjectStore,
} from '../../activities/adapters/k8s/options';
import type { ClusterAdapter, DriverSpec, DriverStatus } from '../../domain/driver';
import { startFakeK8s, type FakeK8s, type KObject } from '../../testkit/fake-k8s';
import { installChartRbac, helmAvailable, type ChartRelease } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startKubelet, type Kubelet, type PodPlan } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import { sparkSpec } from '../../testkit/spark-spec';

const realReady = k8sAvailable() && helmAvailable();

const NS = 'spark-jobs';
const config = { K8S_SPARK_IMAGE: 'apache/spark:3.5.7-python3', K8S_NAMESPACE: NS, ARTIFACT_DIR: '/srv/artifacts' };
const ACCESS_KEY = 'AKIA-ACCESS-KEY-1234';
const SECRET_KEY = 'very/secret+key-5678';
const PASSWORD = 'basic-auth-password-42';

/**
 * Where launch uploads artifacts in these tests: a record of the uploads. The uploads themselves go to a
 * real S3-compatible server in k8s-s3a.test.ts.
 */
const uploads: { bucket: string; key: string; file: string }[] = [];
const objectStore: ObjectStore = {
  put: async (bucket, key, file) => void uploads.push({ bucket, key, file }),
  deletePrefix: async () => undefined,
  ensureFolder: async () => undefined,
  get: async () => false,
};

const clusterFor = (url: string, extra: Partial<K8sCluster> = {}): K8sCluster => ({
  name: 'k8s-test',
  url,
  sparkStorage: 'minio',
  storages: {
    minio: {
      sparkBucket: 'spark-bucket',
      endpoint: 'http://minio.storage:9000',
      region: 'eu-west-1',
      accessKey: ACCESS_KEY,
      secretKey: SECRET_KEY,
    },
  },
  ...extra,
});

function scalaSpec(over: Partial<DriverSpec> = {}, spark: Partial<DriverSpec['spark']> = {}): DriverSpec {
  return {
    driverId: 'job-0123abcd-1',
    role: 'application',
    env: { TEAM: 'data' },
    labels: { jobId: '0123abcd', groupId: 'g-42', scheduleId: 'sched 7' },
    spark: sparkSpec({
      name: 'spark-pi',
      language: 'SCALA',
      clusterName: 'k8s-test',
      jobClass: 'org.example.SparkPi',
      args: ['100', '--verbose'],
      jobConfig: { 'spark.sql.shuffle.partitions': '8', 'spark.executor.memory': '3g' },
      packages: ['org.postgresql:postgresql:42.7.4', 'com.example:util:1.0'],
      memorySettings: { dynamicAllocation: false, driverCores: 2, driverMemory: '2g', executors: 3 },
      artifacts: {
        jars: ['/srv/artifacts/jobs/0123abcd/pi.jar', '/srv/artifacts/jobs/0123abcd/lib.jar'],
        files: ['/srv/artifacts/jobs/0123abcd/app.conf'],
        pyFiles: [],
      },
      ...spark,
    }),
    ...over,
  };
}

function pythonSpec(over: Partial<DriverSpec> = {}, spark: Partial<DriverSpec['spark']> = {}): DriverSpec {
  return scalaSpec(over, {
    language: 'PYTHON',
    jobClass: 'wordcount',
    packages: [],
    artifacts: {
      jars: [],
      files: [],
      pyFiles: ['/srv/artifacts/jobs/0123abcd/helpers.py', '/srv/artifacts/jobs/0123abcd/wordcount.py'],
    },
    ...spark,
  });
}

/** The --conf pairs of a spark-submit argument list. */
function confOf(args: string[]): Record<string, string> {
  const c: Record<string, string> = {};
  args.forEach((a, i) => {
    if (a === '--conf') {
      const kv = args[i + 1];
      c[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
    }
  });
  return c;
}
const optOf = (args: string[], flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe.skipIf(!realReady)('k8s adapter: launch against a real API server with the chart RBAC', () => {
  let cp: ControlPlaneInfo;
  let release: ChartRelease;
  let kubelet: Kubelet;
  let RNS: string;
  let adapter: ClusterAdapter;
  /** What the kubelet does with a pod, by its name. */
  const plans = new Map<string, PodPlan>();
  const realConfig = () => ({ ...config, K8S_NAMESPACE: RNS });
  const realAdapter = (extra: Partial<K8sCluster> = {}) =>
    createK8sAdapter({
      objectStore,
      cluster: clusterFor(cp.url, { caCert: cp.caCert, token: release.token, ...extra }),
      config: realConfig(),
    });
  const admin = (method: string, p: string) => kubeRequest(cp, cp.adminToken, method, p);
  /** An object of the namespace as the API server holds it; undefined when there is none. */
  const obj = async (kind: 'pods' | 'services' | 'secrets', name: string): Promise<KObject | undefined> => {
    const r = await admin('GET', `/api/v1/namespaces/${RNS}/${kind}/${name}`);
    return r.status === 200 ? (r.body as KObject) : undefined;
  };
  const podOf = async (driverId: string) => (await obj('pods', k8sNames(driverId).pod))!;
  /** `kind/name` of the pods, services and secrets labelled with the driver. */
  const labelled = async (base: string) =>
    (
      await Promise.all(
        ['pods', 'services', 'secrets'].map(async (kind) => {
          const sel = encodeURIComponent(`${Labels.DRIVER_ID}=${base}`);
          const r = await admin('GET', `/api/v1/namespaces/${RNS}/${kind}?labelSelector=${sel}`);
          return (r.body.items as KObject[]).map((o) => `${kind}/${o.metadata.name}`);
        }),
      )
    ).flat();
  const phaseOf = async (driverId: string) => (await adapter.status(driverId)).phase;

  beforeAll(async () => {
    cp = await sharedControlPlane(inject('testDir'));
    release = await installChartRbac(cp, 'adapter', 'adapter-rel');
    RNS = release.driverNamespace;
    kubelet = await startKubelet({
      cp,
      nodeName: 'node-adapter',
      namespaces: [RNS],
      dir: `${inject('testDir')}/kubelet-adapter`,
      capacity: { cpu: 64, memoryMiB: 65536 },
      plan: (p) => plans.get(p.metadata!.name!) ?? { hold: ['driver running'] },
    });
  }, K8S_SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await kubelet?.stop();
  });
  beforeEach(() => {
    adapter = realAdapter();
  });
  afterEach(async () => {
    // The next test's drivers reuse names: this one's pods go, and their services and secrets with them.
    await admin('DELETE', `/api/v1/namespaces/${RNS}/pods?gracePeriodSeconds=0`);
    await waitFor(async () => {
      const left = await Promise.all(
        ['pods', 'services', 'secrets'].map(async (kind) => {
          const sel = encodeURIComponent(`${Labels.MANAGED_BY}=spark-orchestrator`);
          return ((await admin('GET', `/api/v1/namespaces/${RNS}/${kind}?labelSelector=${sel}`)).body.items ?? [])
            .length;
        }),
      );
      return left.every((n) => n === 0);
    }, 60_000);
  });

  it('creates a headless service, a secret and the driver pod, all schema-valid, with deterministic names and labels', async () => {
    const spec = scalaSpec();
    const n = k8sNames(spec.driverId);
    expect(n).toEqual(k8sNames('job-0123abcd-1'));
    expect(n.pod).toBe('job-0123abcd-1-driver');

    const st = await adapter.launch(spec);
    expect(st).toMatchObject({ phase: 'PENDING', appId: n.appId });

    const pod = (await obj('pods', n.pod))!;
    const service = (await obj('services', n.service))!;
    const secret = (await obj('secrets', n.secret))!;
    expect([pod, service, secret].every(Boolean)).toBe(true);
    expect(await labelled(n.base)).toHaveLength(3);
    // What the API server stored passes the official schema too.
    expect(() => new Pod(pod as never).validate()).not.toThrow();
    expect(() => new Service(service as never).validate()).not.toThrow();
    expect(() => new Secret(secret as never).validate()).not.toThrow();

    expect(pod.metadata.labels).toMatchObject({
      [Labels.DRIVER_ID]: n.base,
      [Labels.JOB_ID]: '0123abcd',
      [Labels.GROUP_ID]: 'g-42',
      [Labels.ROLE]: 'application',
      [Labels.SPARK_ROLE]: 'driver',
      [Labels.SPARK_APP_SELECTOR]: n.appId,
    });
    // 'sched 7' is not a valid label value: cleaned, with a hash so it stays distinct.
    expect(pod.metadata.labels[Labels.SCHEDULE_ID]).toMatch(/^sched-7-[0-9a-f]{8}$/);
    for (const key of Object.keys(pod.metadata.labels))
      expect(
        key.startsWith('spark-orchestrator.io/') ||
          ['spark-role', 'spark-app-selector', Labels.MANAGED_BY].includes(key),
      ).toBe(true);

    expect(service.spec.clusterIP).toBe('None');
    for (const [k, v] of Object.entries(service.spec.selector as Record<string, string>))
      expect(pod.metadata.labels[k]).toBe(v);

    expect(pod.spec.restartPolicy).toBe('Never');
    const c = pod.spec.containers[0];
    expect(c.image).toBe(config.K8S_SPARK_IMAGE);
    // No CPU limit unless the job asks for one (spark.kubernetes.driver.limit.cores).
    expect(c.resources).toEqual({ requests: { cpu: '2', memory: '2432Mi' }, limits: { memory: '2432Mi' } });
  });

  it('runs spark-submit in client mode with the job conf, memory conf, packages, class and s3a artifacts', async () => {
    const spec = scalaSpec();
    const n = k8sNames(spec.driverId);
    await adapter.launch(spec);
    const c = (await podOf(spec.driverId)).spec.containers[0];
    expect(c.command).toEqual(['/opt/spark/bin/spark-submit']);
    const args = c.args as string[];
    expect(args.slice(0, 4)).toEqual(['--master', 'k8s://https://kubernetes.default.svc', '--deploy-mode', 'client']);
    expect(optOf(args, '--class')).toBe('org.example.SparkPi');
    const conf = confOf(args);
    expect(conf).toMatchObject({
      'spark.driver.host': `${n.service}.${RNS}.svc`,
      'spark.kubernetes.namespace': RNS,
      'spark.kubernetes.container.image': config.K8S_SPARK_IMAGE,
      'spark.kubernetes.driver.pod.name': n.pod,
      [`spark.kubernetes.executor.label.${Labels.DRIVER_ID}`]: n.base,
      'spark.sql.shuffle.partitions': '8',
      'spark.executor.memory': '3g',
      'spark.driver.memory': '2g',
      'spark.driver.cores': '2',
      'spark.executor.instances': '3',
      'spark.dynamicAllocation.enabled': 'false',
      'spark.hadoop.fs.s3a.endpoint': 'http://minio.storage:9000',
      'spark.hadoop.fs.s3a.endpoint.region': 'eu-west-1',
      'spark.app.id': n.appId,
    });
    expect(optOf(args, '--packages')).toBe(
      `org.postgresql:postgresql:42.7.4,com.example:util:1.0,${HADOOP_AWS_PACKAGE}`,
    );
    expect(optOf(args, '--jars')).toBe('s3a://spark-bucket/artifacts/jobs/0123abcd/lib.jar');
    expect(optOf(args, '--files')).toBe('s3a://spark-bucket/artifacts/jobs/0123abcd/app.conf');
    // The primary resource (first jar), then the application's arguments.
    expect(args.slice(-3)).toEqual(['s3a://spark-bucket/artifacts/jobs/0123abcd/pi.jar', '100', '--verbose']);
    expect(c.env).toContainEqual({ name: 'TEAM', value: 'data' });
    // A service account named for the driver (cluster mode's setting) becomes the pod's, where the cluster allows it.
    const withSa = buildDriverManifests(
      scalaSpec({}, { jobConfig: { 'spark.kubernetes.authenticate.driver.serviceAccountName': 'spark' } }),
      { cluster: clusterFor(cp.url, { allowedAccessSettings: ['serviceAccount'] }), config: realConfig() },
    );
    expect(withSa.pod.spec!.serviceAccountName).toBe('spark');
  });

  it('keeps storage keys out of args and env values: a secret holds them, env refers to it', async () => {
    const spec = scalaSpec();
    const n = k8sNames(spec.driverId);
    await adapter.launch(spec);
    const pod = await podOf(spec.driverId);
    const text = JSON.stringify(pod);
    expect(text).not.toContain(ACCESS_KEY);
    expect(text).not.toContain(SECRET_KEY);
    const env = pod.spec.containers[0].env as { name: string; value?: string; valueFrom?: any }[];
    expect(env.find((e) => e.name === 'AWS_ACCESS_KEY_ID')).toEqual({
      name: 'AWS_ACCESS_KEY_ID',
      valueFrom: { secretKeyRef: { name: n.secret, key: 'AWS_ACCESS_KEY_ID' } },
    });
    expect(env.find((e) => e.name === 'AWS_SECRET_ACCESS_KEY')?.valueFrom.secretKeyRef).toEqual({
      name: n.secret,
      key: 'AWS_SECRET_ACCESS_KEY',
    });
    // Executors get the same references through Spark.
    expect(confOf(pod.spec.containers[0].args)[`spark.kubernetes.executor.secretKeyRef.AWS_SECRET_ACCESS_KEY`]).toBe(
      `${n.secret}:AWS_SECRET_ACCESS_KEY`,
    );
    const secret = (await obj('secrets', n.secret))!;
    expect(Buffer.from(secret.data.AWS_ACCESS_KEY_ID, 'base64').toString()).toBe(ACCESS_KEY);
    expect(Buffer.from(secret.data.AWS_SECRET_ACCESS_KEY, 'base64').toString()).toBe(SECRET_KEY);
    // No keys, no secret.
    const bare = realAdapter({ storages: { minio: { sparkBucket: 'spark-bucket' } } });
    await bare.launch(scalaSpec({ driverId: 'job-nokeys-1' }));
    expect(await obj('secrets', k8sNames('job-nokeys-1').secret)).toBeUndefined();
    expect(JSON.stringify((await podOf('job-nokeys-1')).spec)).not.toContain('AWS_');
  });

  it('sizes the driver from the memory settings: memory + max(10%, 384Mi) overhead, 1 cpu / 1g by default', async () => {
    await adapter.launch(
      scalaSpec(
        { driverId: 'job-big-1' },
        { memorySettings: { dynamicAllocation: false, driverMemory: '8g', driverCores: 4 } },
      ),
    );
    expect((await podOf('job-big-1')).spec.containers[0].resources.limits).toEqual({ memory: `${8192 + 819}Mi` });
    await adapter.launch(scalaSpec({ driverId: 'job-default-1' }, { memorySettings: { dynamicAllocation: false } }));
    expect((await podOf('job-default-1')).spec.containers[0].resources.requests).toEqual({
      cpu: '1',
      memory: `${1024 + 384}Mi`,
    });
  });

  it('python: the pyFile named by jobClass is the main file, the others go to --py-files', async () => {
    await adapter.launch(pythonSpec());
    const args = (await podOf('job-0123abcd-1')).spec.containers[0].args as string[];
    expect(args).not.toContain('--class');
    expect(optOf(args, '--py-files')).toBe('s3a://spark-bucket/artifacts/jobs/0123abcd/helpers.py');
    expect(args.slice(-3)).toEqual(['s3a://spark-bucket/artifacts/jobs/0123abcd/wordcount.py', '100', '--verbose']);
    // jobClass may also be the file name itself.
    const m = buildDriverManifests(pythonSpec({}, { jobClass: 'helpers.py' }), {
      cluster: clusterFor(cp.url),
      config: realConfig(),
    });
    expect(m.pod.spec!.containers[0].args!.at(-3)).toBe('s3a://spark-bucket/artifacts/jobs/0123abcd/helpers.py');
  });

  it('runner: runs runner.py from the image (or the configured path) with the given env', async () => {
    const spec = pythonSpec(
      {
        driverId: 'inst-77',
        role: 'runner',
        env: { TEMPORAL_ADDRESS: 'temporal:7233', TASK_QUEUE: 'group-g1' },
        labels: { groupId: 'g1' },
      },
      { args: [] },
    );
    await adapter.launch(spec);
    const pod = await podOf('inst-77');
    const c = pod.spec.containers[0];
    expect(c.args.at(-1)).toBe(DEFAULT_RUNNER_PATH);
    expect(optOf(c.args, '--py-files')).toContain('wordcount.py');
    expect(c.env).toEqual(
      expect.arrayContaining([
        { name: 'TEMPORAL_ADDRESS', value: 'temporal:7233' },
        { name: 'TASK_QUEUE', value: 'group-g1' },
      ]),
    );
    expect(pod.metadata.labels).toMatchObject({ [Labels.ROLE]: 'runner', [Labels.GROUP_ID]: 'g1' });
    const custom = buildDriverManifests(spec, {
      cluster: clusterFor(cp.url),
      config: realConfig(),
      runnerPath: '/app/runner.py',
    });
    expect(custom.pod.spec!.containers[0].args!.at(-1)).toBe('/app/runner.py');
  });

  it('escapes $ in user values so Kubernetes does not expand $(VAR) in them', async () => {
    await adapter.launch(
      scalaSpec({ env: { GREETING: 'cost: $(PRICE) $5' } }, { args: ['$(HOME)'], jobConfig: { 'spark.x': 'a$b' } }),
    );
    const c = (await podOf('job-0123abcd-1')).spec.containers[0];
    expect(c.args.at(-1)).toBe('$$(HOME)');
    expect(confOf(c.args)['spark.x']).toBe('a$$b');
    expect(confOf(c.args)['spark.driver.bindAddress']).toBe('$(SPARK_DRIVER_BIND_ADDRESS)');
    expect(c.env).toContainEqual({ name: 'GREETING', value: 'cost: $$(PRICE) $$5' });
  });

  it('derives DNS-safe, bounded, distinct names from any driverId', async () => {
    const long = `job-${'A'.repeat(80)}-1`;
    const ids = [long, `job-${'A'.repeat(80)}-2`, 'Job_X.1', 'job-x-1', '42-job'];
    const names = ids.map(k8sNames);
    for (const n of names) {
      for (const name of [n.pod, n.service, n.secret]) {
        expect(name.length).toBeLessThanOrEqual(63);
        expect(name).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
      }
      expect(n.base.length).toBeLessThanOrEqual(40);
    }
    expect(new Set(names.map((n) => n.pod)).size).toBe(ids.length);
    expect(names[0].base).toMatch(/-[0-9a-f]{8}$/);
    expect(k8sNames(long)).toEqual(names[0]);
    // The API server takes every name and label.
    for (const id of ids) await adapter.launch(scalaSpec({ driverId: id }));
    for (const n of names) expect(await obj('pods', n.pod)).toBeDefined();
    expect((await podOf(long)).metadata.annotations['spark-orchestrator.io/driver-id']).toBe(long);
  });

  it('launching twice, even concurrently, makes one pod and returns its status', async () => {
    const spec = scalaSpec();
    const [a, b] = await Promise.all([adapter.launch(spec), adapter.launch(spec)]);
    await waitFor(async () => (await phaseOf(spec.driverId)) === 'RUNNING');
    const c = await adapter.launch(spec);
    // One pod, its service and its secret, whoever of the pair created them.
    expect((await labelled(k8sNames(spec.driverId).base)).sort()).toEqual(
      ['pods', 'secrets', 'services']
        .map(
          (k) =>
            `${k}/${k === 'pods' ? k8sNames(spec.driverId).pod : k === 'services' ? k8sNames(spec.driverId).service : k8sNames(spec.driverId).secret}`,
        )
        .sort(),
    );
    for (const st of [a, b]) expect(['PENDING', 'RUNNING']).toContain(st.phase);
    expect(c.phase).toBe('RUNNING');
  });
  describe('logs, through pods/log', () => {
    const driverLines = Array.from({ length: 10 }, (_, i) => `driver line ${i}`);
    const executorLines = Array.from({ length: 4 }, (_, i) => `executor line ${i}`);

    /** An executor pod as Spark creates one for the driver (the kubelet runs it too). */
    const addExecutor = async (driverId: string) => {
      const n = k8sNames(driverId);
      const r = await kubeRequest(cp, cp.adminToken, 'POST', `/api/v1/namespaces/${RNS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${n.base}-exec-1`,
          labels: { [Labels.DRIVER_ID]: n.base, 'spark-role': 'executor', 'spark-app-selector': n.appId },
        },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'spark-kubernetes-executor', image: config.K8S_SPARK_IMAGE }],
        },
      });
      expect(r.status).toBe(201);
      return n;
    };

    it('returns lines [from, from+size) of the driver and of each executor', async () => {
      const n = k8sNames('job-logs-1');
      plans.set(n.pod, { hold: driverLines });
      plans.set(`${n.base}-exec-1`, { hold: executorLines });
      await adapter.launch(scalaSpec({ driverId: 'job-logs-1' }));
      await addExecutor('job-logs-1');
      await waitFor(async () => {
        const phases = await Promise.all(
          [n.pod, `${n.base}-exec-1`].map(async (x) => (await obj('pods', x))?.status?.phase),
        );
        return phases.every((ph) => ph === 'Running');
      }, 20_000);
      const entries = await adapter.logs('job-logs-1', { from: 3, size: 4 });
      expect(entries).toEqual([
        {
          name: n.pod,
          type: 'pod',
          role: 'driver',
          state: 'Running',
          from: 3,
          logSize: 4,
          fileName: `${n.pod}.log`,
          log: driverLines.slice(3, 7),
        },
        {
          name: `${n.base}-exec-1`,
          type: 'pod',
          role: 'executor',
          state: 'Running',
          from: 3,
          logSize: 1,
          fileName: `${n.base}-exec-1.log`,
          log: ['executor line 3'],
        },
      ]);
      const past = await adapter.logs('job-logs-1', { from: 50, size: 10 });
      expect(past.map((e) => e.logSize)).toEqual([0, 0]);
    });

    it('a pending driver has an empty log; a missing one has no entries', async () => {
      plans.set(k8sNames('job-pending-1').pod, { waiting: 'ContainerCreating' });
      await adapter.launch(scalaSpec({ driverId: 'job-pending-1' }));
      const [entry] = await adapter.logs('job-pending-1', { from: 0, size: 100 });
      expect(entry).toMatchObject({ role: 'driver', state: 'Pending', logSize: 0, log: [] });
      expect(await adapter.logs('job-never-1', { from: 0, size: 100 })).toEqual([]);
    });
  });

  it('remove deletes the pod, its executors, the service and the secret, not another driver’s; again is a no-op', async () => {
    await adapter.launch(scalaSpec({ driverId: 'job-rm-1' }));
    await adapter.launch(scalaSpec({ driverId: 'job-keep-1' }));
    for (const id of ['job-rm-1', 'job-keep-1']) {
      const n = k8sNames(id);
      const r = await kubeRequest(cp, cp.adminToken, 'POST', `/api/v1/namespaces/${RNS}/pods`, {
        metadata: { name: `${n.base}-exec-1`, labels: { [Labels.DRIVER_ID]: n.base, 'spark-role': 'executor' } },
        spec: { containers: [{ name: 'spark-kubernetes-executor', image: config.K8S_SPARK_IMAGE }] },
      });
      expect(r.status).toBe(201);
    }
    await adapter.remove('job-rm-1');
    // Deleted with a short grace period: the kubelet lets the pods go within seconds.
    await waitFor(async () => (await labelled(k8sNames('job-rm-1').base)).length === 0, 20_000);
    const keep = k8sNames('job-keep-1');
    expect((await labelled(keep.base)).sort()).toEqual(
      [`pods/${keep.base}-exec-1`, `pods/${keep.pod}`, `services/${keep.service}`, `secrets/${keep.secret}`].sort(),
    );
    await expect(adapter.remove('job-rm-1')).resolves.toBeUndefined();
    await expect(adapter.remove('job-never-1')).resolves.toBeUndefined();
    expect(await phaseOf('job-rm-1')).toBe('MISSING');
  });
  describe('status, as the kubelet stand-in reports it', () => {
    it('follows the pod: PENDING, RUNNING (with start time), SUCCEEDED on its own (with end time and exit code 0)', async () => {
      const id = 'job-phases-1';
      plans.set(k8sNames(id).pod, { hold: ['pi'], exitAfterMs: 2500, exitCode: 0 });
      expect(await adapter.launch(scalaSpec({ driverId: id }))).toMatchObject({ phase: 'PENDING' });
      await waitFor(async () => (await phaseOf(id)) === 'RUNNING', 20_000);
      const running = await adapter.status(id);
      expect(running.startTime).toBeGreaterThan(Date.now() - 60_000);
      expect(running.appId).toBe(k8sNames(id).appId);
      await waitFor(async () => (await phaseOf(id)) === 'SUCCEEDED', 20_000);
      const done = await adapter.status(id);
      expect(done).toMatchObject({ phase: 'SUCCEEDED', exitCode: 0, appId: k8sNames(id).appId });
      expect(done.endTime).toBeGreaterThanOrEqual(done.startTime!);
    });

    it('FAILED with the container reason and exit code', async () => {
      plans.set(k8sNames('job-oom-1').pod, {
        hold: ['allocating'],
        exitAfterMs: 1000,
        exitCode: 137,
        reason: 'OOMKilled',
      });
      await adapter.launch(scalaSpec({ driverId: 'job-oom-1' }));
      await waitFor(async () => (await phaseOf('job-oom-1')) === 'FAILED', 20_000);
      const st = await adapter.status('job-oom-1');
      expect(st).toMatchObject({ phase: 'FAILED', exitCode: 137 });
      expect(st.message).toContain('OOMKilled');
      expect(st.endTime).toBeTypeOf('number');
    });

    it('a pod still creating its container is PENDING', async () => {
      plans.set(k8sNames('job-creating-1').pod, { waiting: 'ContainerCreating' });
      await adapter.launch(scalaSpec({ driverId: 'job-creating-1' }));
      await waitFor(
        async () =>
          (await obj('pods', k8sNames('job-creating-1').pod))?.status?.containerStatuses?.[0]?.state?.waiting
            ?.reason === 'ContainerCreating',
        20_000,
      );
      expect(await phaseOf('job-creating-1')).toBe('PENDING');
    });
  });
});

describe('k8s adapter against the fake API server', () => {
  let fake: FakeK8s;
  let adapter: ClusterAdapter;

  beforeEach(async () => {
    fake = await startFakeK8s({ phases: { runMs: null } });
    adapter = createK8sAdapter({ objectStore, cluster: clusterFor(fake.url), config });
  });
  afterEach(async () => {
    await fake.stop();
  });

  describe('launch', () => {
    it('refuses specs that cannot run, permanently and before calling the API', async () => {
      const bad: [DriverSpec, RegExp, K8sCluster?][] = [
        [scalaSpec({}, { artifacts: { jars: [], files: [], pyFiles: [] } }), /no main jar/],
        [pythonSpec({}, { jobClass: 'missing' }), /no main python file/],
        [
          scalaSpec({}, { artifacts: { jars: ['/etc/passwd'], files: [], pyFiles: [] } }),
          /not inside the artifact store/,
        ],
        [scalaSpec({ env: { 'BAD NAME': 'x' } }), /invalid environment variable name/],
        [scalaSpec(), /has no storage 'minio' with a sparkBucket/, clusterFor(fake.url, { storages: {} })],
        [
          scalaSpec({}, { memorySettings: { dynamicAllocation: false, driverCores: 'lots' as never } }),
          /invalid pod .* manifest/,
        ],
      ];
      for (const [spec, message, cluster] of bad) {
        const a = cluster ? createK8sAdapter({ objectStore, cluster, config }) : adapter;
        await expect(a.launch(spec)).rejects.toMatchObject({
          type: 'InvalidSpec',
          nonRetryable: true,
          message: expect.stringMatching(message),
        });
      }
      expect(fake.requests).toHaveLength(0);
    });
  });

  describe('status', () => {
    it.each(['InvalidImageName', 'ErrImageNeverPull'])(
      'a pending driver waiting on %s is FAILED at once',
      async (reason) => {
        await adapter.launch(scalaSpec());
        fake.setPhase(NS, k8sNames('job-0123abcd-1').pod, 'Pending', {
          reason,
          message: 'bad image "apache/spark:Nope"',
        });
        const st = await adapter.status('job-0123abcd-1');
        expect(st.phase).toBe('FAILED');
        expect(st.message).toContain(reason);
      },
    );

    it.each(['ErrImagePull', 'ImagePullBackOff', 'CreateContainerConfigError'])(
      'a pending driver waiting on %s stays PENDING with the reason, then FAILS after the grace time',
      async (reason) => {
        const strict = createK8sAdapter({ objectStore, cluster: clusterFor(fake.url), config, imagePullGraceMs: 2000 });
        await strict.launch(scalaSpec());
        fake.setPhase(NS, k8sNames('job-0123abcd-1').pod, 'Pending', {
          reason,
          message: 'Back-off pulling image "apache/spark:nope"',
        });
        expect(await strict.status('job-0123abcd-1')).toMatchObject({
          phase: 'PENDING',
          message: `${reason}: Back-off pulling image "apache/spark:nope"`,
        });
        await waitFor(async () => (await strict.status('job-0123abcd-1')).phase === 'FAILED', 5000);
        expect((await strict.status('job-0123abcd-1')).message).toMatch(new RegExp(`^${reason}: .*for more than`));
      },
    );

    it('MISSING for a driver never launched; UNKNOWN when the API server answers 5xx or not at all', async () => {
      expect(await adapter.status('job-never-1')).toEqual({ phase: 'MISSING' });
      fake.setUnavailable(503);
      const st: DriverStatus = await adapter.status('job-never-1');
      expect(st.phase).toBe('UNKNOWN');
      expect(st.message).toContain('503');
      fake.setUnavailable(false);

      const gone = createK8sAdapter({
        objectStore,
        cluster: clusterFor(`http://127.0.0.1:${await freePort()}`),
        config,
      });
      const down = await gone.status('job-0123abcd-1');
      expect(down.phase).toBe('UNKNOWN');
      expect(down.message).toMatch(/unreachable.*ECONNREFUSED/);
      await expect(gone.launch(scalaSpec())).rejects.toBeInstanceOf(K8sApiError);
      // A log read fails at once, for good, with the cause: the API answers 503 with it instead of retrying.
      await expect(gone.logs('job-0123abcd-1', { from: 0, size: 10 })).rejects.toMatchObject({
        type: CLUSTER_UNAVAILABLE,
        nonRetryable: true,
        message: expect.stringMatching(/unreachable.*ECONNREFUSED/),
      });

      // A server that accepts but never answers does not hang a status poll.
      const silent = http.createServer(() => undefined);
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
      try {
        const hung = createK8sAdapter({
          objectStore,
          cluster: clusterFor(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`),
          config,
          requestTimeoutMs: 150,
        });
        expect(await hung.status('job-0123abcd-1')).toMatchObject({
          phase: 'UNKNOWN',
          message: expect.stringMatching(/no answer within 150 ms/),
        });
      } finally {
        silent.closeAllConnections();
        await new Promise<void>((r) => silent.close(() => r()));
      }

      // The pooled connection of a stopped server is not reused.
      await fake.stop();
      expect((await adapter.status('job-0123abcd-1')).phase).toBe('UNKNOWN');
      fake = await startFakeK8s();
    });
  });

  describe('the fake API server', () => {
    const post = async (pathname: string, body: unknown) => {
      const res = await fetch(`${fake.url}${pathname}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };

    it('answers invalid manifests with 422 Invalid, duplicates with 409 AlreadyExists, unknown names with 404 NotFound', async () => {
      const invalid = await post(`/api/v1/namespaces/${NS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'Bad_Name' },
        spec: { containers: [{ name: 'c', image: 42 }] },
      });
      expect(invalid.status).toBe(422);
      expect(invalid.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
      expect(invalid.body.message).toMatch(/image must be string/);
      expect(invalid.body.message).toMatch(/metadata.name/);
      const badLabel = await post(`/api/v1/namespaces/${NS}/services`, {
        metadata: { name: 'svc', labels: { 'a/b/c': 'x y' } },
        spec: { clusterIP: 'None' },
      });
      expect(badLabel.status).toBe(422);

      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'ok' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      };
      expect((await post(`/api/v1/namespaces/${NS}/pods`, pod)).status).toBe(201);
      const dup = await post(`/api/v1/namespaces/${NS}/pods`, pod);
      expect(dup).toMatchObject({ status: 409, body: { kind: 'Status', reason: 'AlreadyExists', code: 409 } });
      const missing = await fetch(`${fake.url}/api/v1/namespaces/${NS}/pods/nope`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
      const list = await fetch(`${fake.url}/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent('a=b')}`);
      expect(await list.json()).toMatchObject({ kind: 'PodList', items: [] });
    });
  });
});

describe('connecting to the API server', () => {
  it('builds the kubeconfig from the cluster: server, CA, client certificate, basic auth', () => {
    const http = buildKubeConfig(clusterFor('http://127.0.0.1:8001'));
    expect(http.getCurrentCluster()).toMatchObject({ server: 'http://127.0.0.1:8001', skipTLSVerify: true });
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const tls = buildKubeConfig(
      clusterFor('https://k8s.example.com:6443/', { caCert: pem, username: 'admin', password: PASSWORD }),
      'spark',
    );
    expect(tls.getCurrentCluster()).toMatchObject({
      server: 'https://k8s.example.com:6443',
      skipTLSVerify: false,
      caData: Buffer.from(pem).toString('base64'),
    });
    expect(tls.getCurrentUser()).toMatchObject({ username: 'admin', password: PASSWORD });
    expect(tls.getContextObject(tls.getCurrentContext())?.namespace).toBe('spark');
    expect(buildKubeConfig(clusterFor('https://k8s.example.com')).getCurrentCluster()?.skipTLSVerify).toBe(false);
  });

  describe('basic auth', () => {
    let fake: FakeK8s;
    beforeAll(async () => {
      fake = await startFakeK8s({ basicAuth: { username: 'admin', password: PASSWORD }, phases: { runMs: null } });
    });
    afterAll(async () => {
      await fake.stop();
    });

    it('sends the credentials; a wrong password fails without showing it', async () => {
      const ok = createK8sAdapter({
        objectStore,
        cluster: clusterFor(fake.url, { username: 'admin', password: PASSWORD }),
        config,
      });
      expect((await ok.launch(scalaSpec())).phase).toBe('PENDING');
      expect(
        fake.requests.every((r) => r.authorization === `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`),
      ).toBe(true);

      const wrongPassword = `${PASSWORD}-wrong`;
      const bad = createK8sAdapter({
        objectStore,
        cluster: clusterFor(fake.url, { username: 'admin', password: wrongPassword }),
        config,
      });
      const st = await bad.status('job-0123abcd-1');
      expect(st.phase).toBe('UNKNOWN');
      expect(st.message).toContain('401');
      // Refused credentials fail the launch for good (no retry changes them), in the API server's words.
      const err = await bad.launch(scalaSpec({ driverId: 'job-other-1' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
      expect((err as Error).message).toContain('HTTP 401 Unauthorized');
      for (const text of [st.message!, (err as Error).message, (err as Error).stack ?? '']) {
        expect(text).not.toContain(wrongPassword);
        expect(text).not.toContain(SECRET_KEY);
      }
    });
  });
});
