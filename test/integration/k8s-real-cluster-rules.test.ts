// The k8s adapter against the fake API server answering as a real cluster does when things go wrong or
// are set per cluster: RBAC denials, pods no node can take, images that cannot be pulled, the cluster's
// service account, image and Temporal address, Spark's memory overhead rules, bearer tokens, log paging,
// and logs that outlive the pods.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { k8sNames, Labels } from '../../activities/adapters/k8s/names';
import type { K8sAdapterOptions, K8sCluster, ObjectStore } from '../../activities/adapters/k8s/options';
import { LOG_READ_LIMIT_BYTES } from '../../activities/adapters/k8s/pod-logs';
import type { DriverSpec } from '../../domain/driver';
import { startFakeK8s, type FakeK8s, type FakeK8sOptions } from '../../testkit/fake-k8s';
import { until } from '../../testkit/wait';

const NS = 'spark-jobs';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.bearer-token-of-a-service-account';
/** Records the uploads (the real ones: k8s-s3a.test.ts). */
const objectStore: ObjectStore = { put: async () => undefined, deletePrefix: async () => undefined };

function spec(over: Partial<DriverSpec> = {}, spark: Partial<DriverSpec['spark']> = {}): DriverSpec {
  return {
    driverId: 'job-rules-1',
    role: 'application',
    env: {},
    labels: { jobId: 'rules' },
    spark: {
      name: 'rules',
      language: 'SCALA',
      clusterName: 'k8s',
      jobClass: 'org.example.Main',
      args: [],
      jobConfig: {},
      pyRequirements: [],
      packages: [],
      memorySettings: { dynamicAllocation: false },
      artifacts: { jars: ['https://repo.example.com/app.jar'], files: [], pyFiles: [] },
      tags: {},
      ...spark,
    },
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

describe('the k8s adapter on a cluster that answers like a real one', () => {
  let fake: FakeK8s;
  let stackDir: string;
  const podOf = (driverId: string) => fake.state.pods.get(`${NS}/${k8sNames(driverId).pod}`)!;
  const container = (driverId: string) => podOf(driverId).spec.containers[0];

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

  describe('RBAC', () => {
    it('a 403 on create fails the launch at once and for good, with the API server’s words', async () => {
      const adapter = await start();
      fake.forbid('pods', 'create', 'system:serviceaccount:spark-orchestrator:default');
      const err = await adapter.launch(spec()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
      expect((err as Error).message).toContain(
        'HTTP 403 Forbidden: pods is forbidden: User "system:serviceaccount:spark-orchestrator:default" cannot create resource "pods" in API group "" in the namespace "spark-jobs"',
      );
      expect(fake.state.pods.size).toBe(0);
      // A service that may not create secrets fails as well, before the pod.
      fake.allow('pods', 'create');
      fake.forbid('secrets', 'create');
      const withKeys = createK8sAdapter({
        cluster: {
          name: 'k8s',
          url: fake.url,
          storages: { s3: { sparkBucket: 'b', accessKey: 'AK12', secretKey: 'SK12' } },
        },
        config: { K8S_SPARK_IMAGE: 'apache/spark:3.5.7', K8S_NAMESPACE: NS, ARTIFACT_DIR: '/srv/a' },
        objectStore,
      });
      await expect(withKeys.launch(spec())).rejects.toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
    });

    it('a 403 on reading the pod is UNKNOWN with the reason (the watch goes on)', async () => {
      const adapter = await start();
      await adapter.launch(spec());
      fake.forbid('pods', 'get');
      const st = await adapter.status('job-rules-1');
      expect(st.phase).toBe('UNKNOWN');
      expect(st.message).toMatch(/HTTP 403 Forbidden: pods "job-rules-1-driver" is forbidden/);
    });
  });

  describe('pods that do not start', () => {
    it('a pod no node can take is PENDING with the scheduler’s reason', async () => {
      const adapter = await start({ nodeAllocatable: { cpu: 4, memoryMiB: 4096 } });
      const st = await adapter.launch(spec({}, { memorySettings: { dynamicAllocation: false, driverMemory: '8g' } }));
      expect(st.phase).toBe('PENDING');
      expect(st.message).toMatch(/^Unschedulable: 0\/1 nodes are available: 1 Insufficient memory\./);
      expect((await adapter.status('job-rules-1')).message).toBe(st.message);
      // One that fits runs.
      await adapter.launch(spec({ driverId: 'job-fits-1' }));
      await until('running', async () => (await adapter.status('job-fits-1')).phase === 'RUNNING', 3000);
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
      const adapter = await start(
        {},
        { defaultApplicationConfig: 'spark.kubernetes.container.image=Apache/Spark:3.5' },
      );
      const st = await adapter.launch(spec());
      expect(st.phase).toBe('FAILED');
      expect(st.message).toMatch(/^InvalidImageName: Failed to apply default image tag "Apache\/Spark:3.5"/);
    });
  });

  describe('settings per cluster', () => {
    it('service account and image from the cluster’s defaultApplicationConfig; a job’s jobConfig wins', async () => {
      const adapter = await start(
        {},
        {
          defaultApplicationConfig:
            'spark.kubernetes.authenticate.driver.serviceAccountName=spark-driver\nspark.kubernetes.container.image=registry.example.com/driver:1',
          allowedAccessSettings: ['serviceAccount'],
        },
      );
      await adapter.launch(spec());
      expect(podOf('job-rules-1').spec.serviceAccountName).toBe('spark-driver');
      expect(container('job-rules-1').image).toBe('registry.example.com/driver:1');
      expect(container('job-rules-1').args).toContain('spark.kubernetes.container.image=registry.example.com/driver:1');
      await adapter.launch(
        spec(
          { driverId: 'job-own-1' },
          { jobConfig: { 'spark.kubernetes.authenticate.driver.serviceAccountName': 'mine' } },
        ),
      );
      expect(podOf('job-own-1').spec.serviceAccountName).toBe('mine');
    });

    it('a runner connects to the cluster’s temporalAddress; without one, a loopback address is refused', async () => {
      const runner = (driverId: string) =>
        python({
          driverId,
          role: 'runner',
          env: { TEMPORAL_ADDRESS: '127.0.0.1:7233', RUNNER_TASK_QUEUE: 'group/g1' },
        });
      const bare = await start();
      const err = await bare.launch(runner('inst-1')).catch((e: unknown) => e);
      expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
      expect((err as Error).message).toMatch(
        /has no temporalAddress, and the worker's Temporal address 127.0.0.1:7233/,
      );
      expect(fake.state.pods.size).toBe(0);
      await fake.stop();

      const adapter = await start({}, { temporalAddress: 'temporal-frontend.temporal.svc:7233' });
      await adapter.launch(runner('inst-2'));
      expect(container('inst-2').env).toEqual(
        expect.arrayContaining([
          { name: 'TEMPORAL_ADDRESS', value: 'temporal-frontend.temporal.svc:7233' },
          { name: 'RUNNER_TASK_QUEUE', value: 'group/g1' },
        ]),
      );
      // The cluster's address wins over the worker's, whatever that is.
      await adapter.launch(
        python({ driverId: 'inst-3', role: 'runner', env: { TEMPORAL_ADDRESS: 'temporal.prod:7233' } }),
      );
      expect(container('inst-3').env).toContainEqual({
        name: 'TEMPORAL_ADDRESS',
        value: 'temporal-frontend.temporal.svc:7233',
      });
    });
  });

  describe('network policy', () => {
    it('each driver pod admits only the service’s pods and its own executors; it goes with the driver', async () => {
      const adapter = await start();
      await adapter.launch(spec());
      const n = k8sNames('job-rules-1');
      const np = fake.state.networkpolicies.get(`${NS}/${n.networkPolicy}`)!;
      expect(np.apiVersion).toBe('networking.k8s.io/v1');
      expect(np.spec.podSelector.matchLabels).toEqual({ [Labels.DRIVER_ID]: n.base, [Labels.ROLE]: 'application' });
      // It selects the driver pod and not its executors.
      const driverLabels = podOf('job-rules-1').metadata.labels as Record<string, string>;
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
      await adapter.remove('job-rules-1');
      expect(fake.state.networkpolicies.size).toBe(0);
      // Credentials that may not create NetworkPolicies fail the launch for good.
      fake.forbid('networkpolicies', 'create');
      await expect(adapter.launch(spec({ driverId: 'job-np-2' }))).rejects.toMatchObject({ type: 'InvalidSpec' });
    });
  });

  describe('Spark’s sizing rules', () => {
    it('Python drivers get 0.4 overhead (and pass it to executors); JVM drivers 0.1; factors set win', async () => {
      const adapter = await start();
      const mem = (driverId: string) => container(driverId).resources;
      await adapter.launch(
        python({ driverId: 'py-1' }, { memorySettings: { dynamicAllocation: false, driverMemory: '2g' } }),
      );
      expect(mem('py-1')).toEqual({
        requests: { cpu: '1', memory: `${2048 + 819}Mi` },
        limits: { memory: `${2048 + 819}Mi` },
      });
      expect(container('py-1').args).toContain('spark.kubernetes.memoryOverheadFactor=0.4');
      await adapter.launch(
        spec({ driverId: 'jvm-1' }, { memorySettings: { dynamicAllocation: false, driverMemory: '8g' } }),
      );
      expect(mem('jvm-1').limits).toEqual({ memory: `${8192 + 819}Mi` });
      expect(container('jvm-1').args.join(' ')).not.toContain('memoryOverheadFactor');
      await adapter.launch(
        python(
          { driverId: 'py-2' },
          {
            memorySettings: { dynamicAllocation: false, driverMemory: '2g' },
            jobConfig: { 'spark.driver.memoryOverheadFactor': '0.5', 'spark.kubernetes.driver.limit.cores': '2' },
          },
        ),
      );
      expect(mem('py-2')).toEqual({
        requests: { cpu: '1', memory: `${2048 + 1024}Mi` },
        limits: { cpu: '2', memory: `${2048 + 1024}Mi` },
      });
      // A bad factor is the job's mistake, refused for good.
      await expect(
        adapter.launch(
          python({ driverId: 'py-3' }, { jobConfig: { 'spark.kubernetes.memoryOverheadFactor': 'lots' } }),
        ),
      ).rejects.toMatchObject({ type: 'InvalidSpec' });
    });
  });

  describe('bearer tokens', () => {
    it('authenticates with the cluster’s token; a wrong one is refused without showing it', async () => {
      const adapter = await start({ bearerToken: TOKEN }, { token: TOKEN });
      expect((await adapter.launch(spec())).phase).toBe('PENDING');
      expect(fake.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
      const wrong = `${TOKEN}-wrong`;
      const bad = createK8sAdapter({
        cluster: { name: 'k8s', url: fake.url, token: wrong },
        config: { K8S_SPARK_IMAGE: 'apache/spark:3.5.7', K8S_NAMESPACE: NS, ARTIFACT_DIR: '/srv/a' },
        objectStore,
      });
      const st = await bad.status('job-rules-1');
      expect(st).toMatchObject({ phase: 'UNKNOWN' });
      expect(st.message).toContain('HTTP 401 Unauthorized');
      const err = (await bad.launch(spec({ driverId: 'job-2' })).catch((e: unknown) => e)) as Error;
      expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
      for (const text of [st.message!, err.message, err.stack ?? '']) expect(text).not.toContain(wrong);
    });
  });

  describe('logs', () => {
    it('are read with limitBytes; a longer log keeps its start and its last lines', async () => {
      const adapter = await start();
      await adapter.launch(spec());
      await until('running', async () => (await adapter.status('job-rules-1')).phase === 'RUNNING', 3000);
      const line = (i: number) => `line ${String(i).padStart(7, '0')} ${'x'.repeat(90)}`;
      const count = Math.ceil((LOG_READ_LIMIT_BYTES * 1.5) / 105);
      fake.setLogs(
        NS,
        k8sNames('job-rules-1').pod,
        Array.from({ length: count }, (_, i) => line(i)),
      );
      const [driver] = await adapter.logs('job-rules-1', { from: 0, size: 1_000_000 });
      const reads = fake.requests.filter((r) => r.path.endsWith('/log'));
      expect(reads[0].query).toMatchObject({ limitBytes: String(LOG_READ_LIMIT_BYTES), container: 'spark-driver' });
      expect(reads[1].query).toMatchObject({ tailLines: '2000' });
      expect(driver.log[0]).toBe(line(0));
      const marker = driver.log.findIndex((l) => l.startsWith('... (log cut'));
      expect(marker).toBeGreaterThan(70_000);
      expect(driver.log.at(-1)).toBe(line(count - 1));
      expect(driver.log.length).toBe(marker + 1 + 2000);
      // Paging: lines [from, from + size).
      const page = await adapter.logs('job-rules-1', { from: 10, size: 3 });
      expect(page[0]).toMatchObject({ from: 10, logSize: 3, log: [line(10), line(11), line(12)] });
    });

    it('stay readable after the pods are removed: saved on remove, kept by a later remove', async () => {
      const adapter = await start();
      await adapter.launch(spec());
      const n = k8sNames('job-rules-1');
      await until('running', async () => (await adapter.status('job-rules-1')).phase === 'RUNNING', 3000);
      fake.addPod(NS, {
        metadata: {
          name: `${n.base}-exec-1`,
          labels: { [Labels.DRIVER_ID]: n.base, [Labels.SPARK_ROLE]: 'executor' },
        },
        spec: { containers: [{ name: 'spark-kubernetes-executor', image: 'apache/spark:3.5.7' }] },
      });
      await until(
        'executor running',
        async () => fake.state.pods.get(`${NS}/${n.base}-exec-1`)?.status?.phase === 'Running',
        3000,
      );
      fake.setLogs(NS, n.pod, ['starting', 'Pi is roughly 3.14', 'done']);
      fake.setLogs(NS, `${n.base}-exec-1`, ['executor says hi']);
      fake.setPhase(NS, n.pod, 'Succeeded');

      await adapter.remove('job-rules-1');
      expect(fake.state.pods.size).toBe(0);
      const after = await adapter.logs('job-rules-1', { from: 1, size: 10 });
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
      await adapter.remove('job-rules-1'); // the job's deletion: no pods left, the saved logs stay
      expect((await adapter.logs('job-rules-1', { from: 0, size: 1 }))[0].log).toEqual(['starting']);
      expect(await adapter.logs('job-never-1', { from: 0, size: 1 })).toEqual([]);
    });

    it('a service not allowed to read logs still removes the driver (the saved log says why)', async () => {
      const adapter = await start();
      await adapter.launch(spec());
      await until('running', async () => (await adapter.status('job-rules-1')).phase === 'RUNNING', 3000);
      fake.forbid('pods/log', 'get');
      await adapter.remove('job-rules-1');
      expect(fake.state.pods.size).toBe(0);
      const [saved] = await adapter.logs('job-rules-1', { from: 0, size: 10 });
      expect(saved.role).toBe('driver');
      expect(saved.log).toEqual([expect.stringMatching(/^\(log not readable: .*HTTP 403 Forbidden/)]);
    });
  });
});
