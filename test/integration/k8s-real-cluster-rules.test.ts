// The k8s adapter on clusters that answer as real ones do when things go wrong or are set per cluster. Against
// the real kube-apiserver (testkit/kube: the chart's RBAC, the service account's TokenRequest token, the
// kubelet stand-in): RBAC denials (the chart's own rules with one verb taken away), pods no node can take, the
// cluster's service account, image and Temporal address, NetworkPolicies, Spark's memory overhead rules, bearer
// tokens, log paging through the API server's pods/log, and logs that outlive the pods. Against the fake API
// server (testkit/fake-k8s.ts) only what needs a container runtime this machine lacks: images that cannot be
// pulled (ErrImagePull, ImagePullBackOff) or named (InvalidImageName).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { k8sNames, Labels } from '../../activities/adapters/k8s/names';
import type { K8sAdapterOptions, K8sCluster, ObjectStore } from '../../activities/adapters/k8s/options';
import { LOG_READ_LIMIT_BYTES } from '../../activities/adapters/k8s/pod-logs';
import type { DriverSpec } from '../../domain/driver';
import { startFakeK8s, type FakeK8s, type FakeK8sOptions } from '../../testkit/fake-k8s';
import { installChartRbac, helmAvailable, tokenWithout, type ChartRelease } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startKubelet, type Kubelet, type PodPlan } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import { until } from '../../testkit/wait';
import { sparkSpec } from '../../testkit/spark-spec';

const NS = 'spark-jobs';
const realReady = k8sAvailable() && helmAvailable();
/** Records the uploads (the real ones: k8s-s3a.test.ts). */
const objectStore: ObjectStore = {
  put: async () => undefined,
  deletePrefix: async () => undefined,
  ensureFolder: async () => undefined,
  get: async () => false,
};

function spec(over: Partial<DriverSpec> = {}, spark: Partial<DriverSpec['spark']> = {}): DriverSpec {
  return {
    driverId: 'job-rules-1',
    role: 'application',
    env: {},
    labels: { jobId: 'rules' },
    spark: sparkSpec({
      name: 'rules',
      language: 'SCALA',
      clusterName: 'k8s',
      jobClass: 'org.example.Main',
      artifacts: { jars: ['https://repo.example.com/app.jar'], files: [], pyFiles: [] },
      ...spark,
    }),
    ...over,
  };
}
const python = (over: Partial<DriverSpec> = {}, spark: Partial<DriverSpec['spark']> = {}) =>
  spec(over, {
    language: 'PYTHON',
    jobClass: 'main',
    artifacts: { jars: [], files: [], pyFiles: ['https://repo.example.com/main.py'] },
    ...spark,
  });

describe('the k8s adapter on the fake API server: images (no container runtime here to pull them)', () => {
  let fake: FakeK8s;
  let stackDir: string;

  async function start(
    fakeOpts: FakeK8sOptions = {},
    cluster: Partial<K8sCluster> = {},
    opts: Partial<K8sAdapterOptions> = {},
  ) {
    fake = await startFakeK8s({ phases: { runMs: null }, ...fakeOpts });
    return createK8sAdapter({
      cluster: { name: 'k8s', url: fake.url, ...cluster },
      config: {
        K8S_SPARK_IMAGE: 'apache/spark:3.5.7-python3',
        K8S_NAMESPACE: NS,
        ARTIFACT_DIR: '/srv/a',
        STACK_DIR: stackDir,
      },
      objectStore,
      ...opts,
    });
  }
  beforeEach(() => {
    stackDir = mkdtempSync(path.join(tmpdir(), 'k8s-rules-'));
  });
  afterEach(async () => {
    await fake?.stop();
    rmSync(stackDir, { recursive: true, force: true });
  });

  it('an image the registry lacks: ErrImagePull, then ImagePullBackOff, PENDING with the reason until the grace time, then FAILED', async () => {
    const adapter = await start(
      { missingImages: (i) => i.endsWith(':missing'), phases: { pendingMs: 100, runMs: null } },
      { defaultApplicationConfig: 'spark.kubernetes.container.image=apache/spark:missing' },
      { imagePullGraceMs: 2500 },
    );
    const st = await adapter.launch(spec());
    expect(st).toMatchObject({ phase: 'PENDING' });
    expect(st.message).toMatch(/^ErrImagePull: failed to pull and unpack image "apache\/spark:missing"/);
    await until(
      'back-off',
      async () => (await adapter.status('job-rules-1')).message?.startsWith('ImagePullBackOff'),
      3000,
    );
    expect((await adapter.status('job-rules-1')).phase).toBe('PENDING');
    const failed = await until(
      'failed',
      async () => {
        const s = await adapter.status('job-rules-1');
        return s.phase === 'FAILED' ? s : undefined;
      },
      8000,
    );
    expect(failed.message).toBe(
      'ImagePullBackOff: Back-off pulling image "apache/spark:missing" (for more than 2.5 s)',
    );
  });

  it('an image name that cannot be parsed fails at once: InvalidImageName', async () => {
    const adapter = await start({}, { defaultApplicationConfig: 'spark.kubernetes.container.image=Apache/Spark:3.5' });
    const st = await adapter.launch(spec());
    expect(st.phase).toBe('FAILED');
    expect(st.message).toMatch(/^InvalidImageName: Failed to apply default image tag "Apache\/Spark:3.5"/);
  });
});

describe.skipIf(!realReady)('the k8s adapter against a real API server with the chart RBAC', () => {
  let cp: ControlPlaneInfo;
  let release: ChartRelease;
  let kubelet: Kubelet;
  let RNS: string;
  let stackDir: string;
  /** What the kubelet does with a pod, by its name; default: running with three lines. */
  const plans = new Map<string, PodPlan>();

  beforeAll(async () => {
    cp = await sharedControlPlane(inject('testDir'));
    release = await installChartRbac(cp, 'rules', 'rules-rel');
    RNS = release.driverNamespace;
    kubelet = await startKubelet({
      cp,
      nodeName: 'node-rules',
      namespaces: [RNS],
      dir: `${inject('testDir')}/kubelet-rules`,
      capacity: { cpu: 64, memoryMiB: 8192 },
      plan: (p) => plans.get(p.metadata!.name!) ?? { hold: ['starting', 'Pi is roughly 3.14', 'done'] },
    });
  }, K8S_SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await kubelet?.stop();
  });
  beforeEach(() => {
    stackDir = mkdtempSync(path.join(tmpdir(), 'k8s-rules-'));
  });
  afterEach(async () => {
    // Every test leaves the node empty for the next (capacity is what the scheduling test measures).
    await admin('DELETE', `/api/v1/namespaces/${RNS}/pods?gracePeriodSeconds=0`);
    await until(
      'no pods left',
      async () => ((await admin('GET', `/api/v1/namespaces/${RNS}/pods`)).body.items ?? []).length === 0,
      30_000,
    );
    rmSync(stackDir, { recursive: true, force: true });
  });

  const admin = (method: string, p: string, body?: unknown) => kubeRequest(cp, cp.adminToken, method, p, body);
  const adapterWith = (cluster: Partial<K8sCluster> = {}, opts: Partial<K8sAdapterOptions> = {}) =>
    createK8sAdapter({
      cluster: { name: 'k8s', url: cp.url, caCert: cp.caCert, token: release.token, ...cluster },
      config: {
        K8S_SPARK_IMAGE: 'apache/spark:3.5.7-python3',
        K8S_NAMESPACE: RNS,
        ARTIFACT_DIR: '/srv/a',
        STACK_DIR: stackDir,
      },
      objectStore,
      ...opts,
    });
  const get = async (p: string) => admin('GET', `/api/v1/namespaces/${RNS}/${p}`);
  const podOf = async (driverId: string) => (await get(`pods/${k8sNames(driverId).pod}`)).body as V1Pod;
  const container = async (driverId: string) => (await podOf(driverId)).spec!.containers[0];
  const running = (adapter: { status(id: string): Promise<{ phase: string }> }, driverId: string) =>
    until('running', async () => (await adapter.status(driverId)).phase === 'RUNNING', 20_000);
  const podsLabelled = async (base: string) =>
    ((await get(`pods?labelSelector=${encodeURIComponent(`${Labels.DRIVER_ID}=${base}`)}`)).body.items ??
      []) as V1Pod[];

  const tokenLacking = (resource: string, verb: string) => tokenWithout(cp, release, RNS, resource, [verb]);

  describe('RBAC: the chart rules with one right taken away', () => {
    it('no pods create: the launch fails at once and for good, with the API server’s words', async () => {
      const token = await tokenLacking('pods', 'create');
      const err = await adapterWith({ token })
        .launch(spec({ driverId: 'job-rbac-1' }))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
      expect((err as Error).message).toContain(
        `HTTP 403 Forbidden: pods is forbidden: User "system:serviceaccount:${RNS}:without-pods-create" cannot create resource "pods" in API group "" in the namespace "${RNS}"`,
      );
      expect((err as Error).message).not.toContain(token);
      expect((await get(`pods/${k8sNames('job-rbac-1').pod}`)).status).toBe(404);
    });

    it('no secrets create: a cluster whose storage has keys fails the launch for good', async () => {
      const token = await tokenLacking('secrets', 'create');
      const withKeys = adapterWith({
        token,
        storages: { s3: { sparkBucket: 'b', accessKey: 'AK12', secretKey: 'SK12' } },
      });
      const err = (await withKeys.launch(spec({ driverId: 'job-rbac-2' })).catch((e: unknown) => e)) as Error;
      expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
      expect(err.message).toMatch(/HTTP 403 Forbidden: secrets is forbidden: .* cannot create resource "secrets"/);
      expect(err.message).not.toMatch(/AK12|SK12/);
    });

    it('no pods get: the status is UNKNOWN with the reason (the watch goes on)', async () => {
      await adapterWith().launch(spec({ driverId: 'job-rbac-3' }));
      const st = await adapterWith({ token: await tokenLacking('pods', 'get') }).status('job-rbac-3');
      expect(st.phase).toBe('UNKNOWN');
      expect(st.message).toMatch(/HTTP 403 Forbidden: pods "job-rbac-3-driver" is forbidden/);
    });

    it('no networkpolicies create: the launch fails for good', async () => {
      const adapter = adapterWith({ token: await tokenLacking('networkpolicies', 'create') });
      await expect(adapter.launch(spec({ driverId: 'job-rbac-4' }))).rejects.toMatchObject({
        type: 'InvalidSpec',
        message: expect.stringMatching(/networkpolicies.* is forbidden/),
      });
    });

    it('no pods/log get: remove still deletes the driver, and the saved log says why', async () => {
      const full = adapterWith();
      await full.launch(spec({ driverId: 'job-rbac-5' }));
      await running(full, 'job-rbac-5');
      const noLogs = adapterWith({ token: await tokenLacking('pods/log', 'get') });
      await noLogs.remove('job-rbac-5');
      await until('pod gone', async () => (await get(`pods/${k8sNames('job-rbac-5').pod}`)).status === 404, 30_000);
      const [saved] = await noLogs.logs('job-rbac-5', { from: 0, size: 10 });
      expect(saved.role).toBe('driver');
      expect(saved.log).toEqual([expect.stringMatching(/^\(log not readable: .*HTTP 403 Forbidden/)]);
    });
  });

  it('a pod no node can take is PENDING with the scheduler’s reason; one that fits runs', async () => {
    const adapter = adapterWith();
    const st = await adapter.launch(
      spec({ driverId: 'job-big-1' }, { memorySettings: { dynamicAllocation: false, driverMemory: '8g' } }),
    );
    expect(st.phase).toBe('PENDING');
    const why = await until(
      'unschedulable',
      async () => {
        const x = await adapter.status('job-big-1');
        return x.message?.startsWith('Unschedulable') ? x : undefined;
      },
      20_000,
    );
    expect(why.message).toMatch(/^Unschedulable: 0\/1 nodes are available: 1 Insufficient memory\./);
    expect((await adapter.status('job-big-1')).phase).toBe('PENDING');
    await adapter.launch(spec({ driverId: 'job-fits-1' }));
    await running(adapter, 'job-fits-1');
  });

  describe('settings per cluster', () => {
    it('service account and image from the cluster’s defaultApplicationConfig; a job’s jobConfig wins', async () => {
      // Real admission refuses a pod whose service account does not exist.
      for (const name of ['spark-driver', 'mine'])
        await admin('POST', `/api/v1/namespaces/${RNS}/serviceaccounts`, { metadata: { name } });
      const adapter = adapterWith({
        defaultApplicationConfig:
          'spark.kubernetes.authenticate.driver.serviceAccountName=spark-driver\nspark.kubernetes.container.image=registry.example.com/driver:1',
        allowedAccessSettings: ['serviceAccount'],
      });
      await adapter.launch(spec({ driverId: 'job-sa-1' }));
      expect((await podOf('job-sa-1')).spec!.serviceAccountName).toBe('spark-driver');
      expect((await container('job-sa-1')).image).toBe('registry.example.com/driver:1');
      expect((await container('job-sa-1')).args).toContain(
        'spark.kubernetes.container.image=registry.example.com/driver:1',
      );
      await adapter.launch(
        spec(
          { driverId: 'job-sa-2' },
          { jobConfig: { 'spark.kubernetes.authenticate.driver.serviceAccountName': 'mine' } },
        ),
      );
      expect((await podOf('job-sa-2')).spec!.serviceAccountName).toBe('mine');
    });

    it('a runner connects to the cluster’s temporalAddress; without one, a loopback address is refused', async () => {
      const runner = (driverId: string) =>
        python({
          driverId,
          role: 'runner',
          env: { TEMPORAL_ADDRESS: '127.0.0.1:7233', RUNNER_TASK_QUEUE: 'group/g1' },
        });
      const err = await adapterWith()
        .launch(runner('inst-rules-1'))
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
      expect((err as Error).message).toMatch(
        /has no temporalAddress, and the worker's Temporal address 127.0.0.1:7233/,
      );
      expect((await get(`pods/${k8sNames('inst-rules-1').pod}`)).status).toBe(404);

      const adapter = adapterWith({ temporalAddress: 'temporal-frontend.temporal.svc:7233' });
      await adapter.launch(runner('inst-rules-2'));
      expect((await container('inst-rules-2')).env).toEqual(
        expect.arrayContaining([
          { name: 'TEMPORAL_ADDRESS', value: 'temporal-frontend.temporal.svc:7233' },
          { name: 'RUNNER_TASK_QUEUE', value: 'group/g1' },
        ]),
      );
      // The cluster's address wins over the worker's, whatever that is.
      await adapter.launch(
        python({ driverId: 'inst-rules-3', role: 'runner', env: { TEMPORAL_ADDRESS: 'temporal.prod:7233' } }),
      );
      expect((await container('inst-rules-3')).env).toContainEqual({
        name: 'TEMPORAL_ADDRESS',
        value: 'temporal-frontend.temporal.svc:7233',
      });
    });
  });

  it('each driver pod admits only the service’s pods and its own executors; it goes with the driver', async () => {
    const adapter = adapterWith();
    await adapter.launch(spec({ driverId: 'job-np-1' }));
    const n = k8sNames('job-np-1');
    const npPath = `/apis/networking.k8s.io/v1/namespaces/${RNS}/networkpolicies/${n.networkPolicy}`;
    const np = (await admin('GET', npPath)).body;
    expect(np.apiVersion).toBe('networking.k8s.io/v1');
    expect(np.spec.podSelector.matchLabels).toEqual({ [Labels.DRIVER_ID]: n.base, [Labels.ROLE]: 'application' });
    // It selects the driver pod and not its executors.
    const driverLabels = (await podOf('job-np-1')).metadata!.labels!;
    for (const [k, v] of Object.entries(np.spec.podSelector.matchLabels as Record<string, string>))
      expect(driverLabels[k]).toBe(v);
    expect(np.spec.policyTypes).toEqual(['Ingress']);
    expect(np.spec.ingress).toEqual([
      { from: [{ namespaceSelector: {}, podSelector: { matchLabels: { [Labels.CLIENT]: 'true' } } }] },
      {
        from: [{ podSelector: { matchLabels: { [Labels.DRIVER_ID]: n.base, [Labels.SPARK_ROLE]: 'executor' } } }],
        ports: [
          { protocol: 'TCP', port: 7078 },
          { protocol: 'TCP', port: 7079 },
        ],
      },
    ]);
    await adapter.remove('job-np-1');
    await until('policy gone', async () => (await admin('GET', npPath)).status === 404, 30_000);
  });

  it('Python drivers get 0.4 overhead (and pass it to executors); JVM drivers 0.1; factors set win', async () => {
    const adapter = adapterWith();
    const mem = async (driverId: string) => (await container(driverId)).resources;
    await adapter.launch(
      python({ driverId: 'py-1' }, { memorySettings: { dynamicAllocation: false, driverMemory: '2g' } }),
    );
    expect(await mem('py-1')).toEqual({
      requests: { cpu: '1', memory: `${2048 + 819}Mi` },
      limits: { memory: `${2048 + 819}Mi` },
    });
    expect((await container('py-1')).args).toContain('spark.kubernetes.memoryOverheadFactor=0.4');
    await adapter.launch(
      spec({ driverId: 'jvm-1' }, { memorySettings: { dynamicAllocation: false, driverMemory: '4g' } }),
    );
    expect((await mem('jvm-1'))!.limits).toEqual({ memory: `${4096 + 409}Mi` });
    expect((await container('jvm-1')).args!.join(' ')).not.toContain('memoryOverheadFactor');
    await adapter.launch(
      python(
        { driverId: 'py-2' },
        {
          memorySettings: { dynamicAllocation: false, driverMemory: '2g' },
          jobConfig: { 'spark.driver.memoryOverheadFactor': '0.5', 'spark.kubernetes.driver.limit.cores': '2' },
        },
      ),
    );
    // 2048 + 1024 Mi, which the API server stores in its canonical form.
    expect(await mem('py-2')).toEqual({
      requests: { cpu: '1', memory: '3Gi' },
      limits: { cpu: '2', memory: '3Gi' },
    });
    // A bad factor is the job's mistake, refused for good.
    await expect(
      adapter.launch(python({ driverId: 'py-3' }, { jobConfig: { 'spark.kubernetes.memoryOverheadFactor': 'lots' } })),
    ).rejects.toMatchObject({ type: 'InvalidSpec' });
  });

  it('authenticates with the cluster’s token; a wrong one is refused (401) without showing it', async () => {
    const adapter = adapterWith();
    expect((await adapter.launch(spec({ driverId: 'job-tok-1' }))).phase).toBe('PENDING');
    const wrong = `${release.token.slice(0, -4)}AAAA`;
    const bad = adapterWith({ token: wrong });
    const st = await bad.status('job-tok-1');
    expect(st).toMatchObject({ phase: 'UNKNOWN' });
    expect(st.message).toContain('HTTP 401 Unauthorized');
    const err = (await bad.launch(spec({ driverId: 'job-tok-2' })).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
    for (const text of [st.message!, err.message, err.stack ?? '']) expect(text).not.toContain(wrong);
  });

  describe('logs, through the API server’s pods/log', () => {
    it('are read with limitBytes; a longer log keeps its start and its last lines', async () => {
      const line = (i: number) => `line ${String(i).padStart(7, '0')} ${'x'.repeat(90)}`;
      const count = Math.ceil((LOG_READ_LIMIT_BYTES * 1.5) / 105);
      plans.set(k8sNames('job-log-1').pod, { hold: Array.from({ length: count }, (_, i) => line(i)) });
      const adapter = adapterWith();
      await adapter.launch(spec({ driverId: 'job-log-1' }));
      await running(adapter, 'job-log-1');
      const [driver] = await adapter.logs('job-log-1', { from: 0, size: 1_000_000 });
      expect(driver.log[0]).toBe(line(0));
      const marker = driver.log.findIndex((l) => l.startsWith('... (log cut'));
      expect(marker).toBeGreaterThan(70_000);
      expect(driver.log.at(-1)).toBe(line(count - 1));
      expect(driver.log.length).toBe(marker + 1 + 2000);
      // Paging: lines [from, from + size).
      const page = await adapter.logs('job-log-1', { from: 10, size: 3 });
      expect(page[0]).toMatchObject({ from: 10, logSize: 3, log: [line(10), line(11), line(12)] });
    });

    it('stay readable after the pods are removed: saved on remove, kept by a later remove', async () => {
      const n = k8sNames('job-log-2');
      plans.set(n.pod, { hold: ['starting', 'Pi is roughly 3.14', 'done'], exitAfterMs: 1500 });
      plans.set(`${n.base}-exec-1`, { hold: ['executor says hi'] });
      const adapter = adapterWith();
      await adapter.launch(spec({ driverId: 'job-log-2' }));
      await running(adapter, 'job-log-2');
      // An executor as Spark makes it: labelled with the driver, in the driver's namespace.
      const exec = await admin('POST', `/api/v1/namespaces/${RNS}/pods`, {
        metadata: {
          name: `${n.base}-exec-1`,
          labels: { [Labels.DRIVER_ID]: n.base, [Labels.SPARK_ROLE]: 'executor' },
        },
        spec: { containers: [{ name: 'spark-kubernetes-executor', image: 'apache/spark:3.5.7' }] },
      });
      expect(exec.status).toBe(201);
      await until(
        'driver succeeded, executor running',
        async () => {
          const pods = await podsLabelled(n.base);
          const phase = (name: string) => pods.find((p) => p.metadata?.name === name)?.status?.phase;
          return phase(n.pod) === 'Succeeded' && phase(`${n.base}-exec-1`) === 'Running';
        },
        20_000,
      );
      await adapter.remove('job-log-2');
      await until('pods gone', async () => (await podsLabelled(n.base)).length === 0, 30_000);
      const after = await adapter.logs('job-log-2', { from: 1, size: 10 });
      expect(after).toEqual([
        expect.objectContaining({
          name: n.pod,
          role: 'driver',
          state: 'Succeeded',
          from: 1,
          log: ['Pi is roughly 3.14', 'done'],
        }),
        expect.objectContaining({ name: `${n.base}-exec-1`, role: 'executor', state: 'Running', from: 1, log: [] }),
      ]);
      await adapter.remove('job-log-2'); // the job's deletion: no pods left, the saved logs stay
      expect((await adapter.logs('job-log-2', { from: 0, size: 1 }))[0].log).toEqual(['starting']);
      expect(await adapter.logs('job-never-1', { from: 0, size: 1 })).toEqual([]);
    });
  });
});
