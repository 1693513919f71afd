// The small pieces buildDriverManifests is composed of, one at a time (no API server).
import { imageRunnerJars } from '../../activities/adapters/runner-jvm';
import { parseDefaultConf } from '../../domain/spark-defaults';
import { describe, expect, it } from 'vitest';
import { artifactUris, mainResource } from '../../activities/adapters/k8s/artifacts';
import { manifestContext, type ManifestContext } from '../../activities/adapters/k8s/context';
import { buildDriverManifests } from '../../activities/adapters/k8s/manifests';
import { driverEnv, specEnv, storageKeyEnv } from '../../activities/adapters/k8s/driver-env';
import { k8sNames, labelValue, Labels, specLabels } from '../../activities/adapters/k8s/names';
import {
  DEFAULT_RUNNER_PATH,
  HADOOP_AWS_PACKAGE,
  type K8sCluster,
  type ManifestOptions,
} from '../../activities/adapters/k8s/options';
import {
  driverResources,
  jvmMiB,
  podManifest,
  secretManifest,
  serviceManifest,
} from '../../activities/adapters/k8s/resources';
import {
  clusterDefaultConf,
  CONF_PARTS,
  driverConf,
  executorLabelConf,
  executorSecretConf,
  sparkConf,
  storageConf,
} from '../../activities/adapters/k8s/spark-conf';
import { podStatus } from '../../activities/adapters/k8s/status';
import { EVENT_LOG_PREFIX, eventLogBucket } from '../../activities/adapters/k8s/event-logs';
import {
  classOption,
  confOptions,
  noExpansion,
  packagesOption,
  submitArgs,
} from '../../activities/adapters/k8s/submit-args';
import type { DriverSpec } from '../../domain/driver';
import { IMAGE_REFERENCE, K8S_NAMESPACE_NAME } from '../../api/clusters/schemas';
import { directSecret } from '../../lib/driver-secret';
import { sparkSpec } from '../../testkit/spark-spec';

const config = { K8S_SPARK_IMAGE: 'apache/spark:3.5.7', K8S_NAMESPACE: 'jobs', ARTIFACT_DIR: '/srv/artifacts' };
const withKeys: K8sCluster = {
  name: 'prod',
  url: 'https://k8s:6443',
  sparkStorage: 'minio',
  storages: {
    minio: { sparkBucket: 'spark', endpoint: 'http://minio:9000', region: 'eu-1', accessKey: 'AK', secretKey: 'SK' },
  },
};
const noStorage: K8sCluster = { name: 'bare', url: 'https://k8s:6443' };

function spec(over: Partial<DriverSpec> = {}, spark: Partial<DriverSpec['spark']> = {}): DriverSpec {
  return {
    driverId: 'job-abc-1',
    role: 'application',
    env: {},
    labels: { jobId: 'abc' },
    ...over,
    spark: sparkSpec({
      name: 'pi',
      language: 'SCALA',
      clusterName: 'prod',
      jobClass: 'org.example.Pi',
      artifacts: { jars: ['/srv/artifacts/jobs/abc/pi.jar'], files: [], pyFiles: [] },
      ...spark,
    }),
  };
}

const ctx = (
  s: DriverSpec = spec(),
  cluster: K8sCluster = withKeys,
  extra: Partial<ManifestOptions> = {},
): ManifestContext => manifestContext(s, { cluster, config, ...extra });

describe('names', () => {
  it('keeps a short DNS-safe driverId and derives the other names from it', () => {
    expect(k8sNames('job-abc-1')).toMatchObject({
      base: 'job-abc-1',
      pod: 'job-abc-1-driver',
      service: 'job-abc-1-driver-svc',
      secret: 'job-abc-1-storage',
    });
    expect(k8sNames('job-abc-1').appId).toMatch(/^spark-[0-9a-f]{32}$/);
  });

  it('cleans, bounds and hash-suffixes any other driverId, so two ids never share a name', () => {
    const a = k8sNames('Inst_ABC.1');
    const b = k8sNames('inst-abc-1');
    expect(a.base).toMatch(/^inst-abc-1-[0-9a-f]{8}$/);
    expect(b.base).toBe('inst-abc-1');
    expect(k8sNames('9' + 'x'.repeat(100)).base).toMatch(/^d-9x+-[0-9a-f]{8}$/);
    expect(k8sNames('9' + 'x'.repeat(100)).base.length).toBeLessThanOrEqual(40);
  });

  it('makes label values valid: short values stay, others are cleaned and hashed', () => {
    expect(labelValue('g-42')).toBe('g-42');
    expect(labelValue('sched 7')).toMatch(/^sched-7-[0-9a-f]{8}$/);
    expect(labelValue('y'.repeat(70)).length).toBeLessThanOrEqual(63);
    expect(labelValue('!!!')).toMatch(/^[0-9a-f]{8}$/);
  });

  it('labels only the ids it knows, and only when set', () => {
    expect(specLabels({ jobId: 'j1', groupId: '', scheduleId: 's 1', team: 'x' })).toEqual({
      [Labels.JOB_ID]: 'j1',
      [Labels.SCHEDULE_ID]: labelValue('s 1'),
    });
  });
});

describe('artifacts and the main resource', () => {
  it('turns artifact-store paths into s3a URIs in the spark bucket and keeps URIs as they are', () => {
    const s = spec(
      {},
      {
        artifacts: {
          jars: ['/srv/artifacts/jobs/abc/pi.jar', 'https://repo/x.jar'],
          files: ['/srv/artifacts/a b.conf'],
          pyFiles: [],
        },
      },
    );
    expect(artifactUris(s, withKeys, config.ARTIFACT_DIR)).toEqual({
      jars: ['s3a://spark/artifacts/jobs/abc/pi.jar', 'https://repo/x.jar'],
      pyFiles: [],
      files: ['s3a://spark/artifacts/a b.conf'],
      usesS3a: true,
      // What launch uploads first, to where the URIs point.
      bucket: 'spark',
      uploads: [
        { file: '/srv/artifacts/jobs/abc/pi.jar', key: 'artifacts/jobs/abc/pi.jar' },
        { file: '/srv/artifacts/a b.conf', key: 'artifacts/a b.conf' },
      ],
    });
    expect(
      artifactUris(
        spec({}, { artifacts: { jars: ['https://repo/x.jar'], files: [], pyFiles: [] } }),
        noStorage,
        config.ARTIFACT_DIR,
      ).usesS3a,
    ).toBe(false);
  });

  it('refuses paths outside the store, and store paths on a cluster without a spark bucket, permanently', () => {
    const outside = spec({}, { artifacts: { jars: ['/etc/passwd'], files: [], pyFiles: [] } });
    expect(() => artifactUris(outside, withKeys, config.ARTIFACT_DIR)).toThrow(
      expect.objectContaining({ type: 'InvalidSpec', nonRetryable: true }),
    );
    expect(() => artifactUris(spec(), noStorage, config.ARTIFACT_DIR)).toThrow(
      /cluster 'bare' has no storage 's3' with a sparkBucket/,
    );
  });

  it('SCALA runs the first jar with jobClass; PYTHON runs the pyFile jobClass names; a runner runs the runner', () => {
    const uris = { jars: ['a.jar', 'b.jar'], pyFiles: ['h.py', 'main.py'], files: [], usesS3a: false, uploads: [] };
    const py = spec(
      {},
      { language: 'PYTHON', jobClass: 'main', artifacts: { jars: [], files: [], pyFiles: ['/x/h.py', '/x/main.py'] } },
    );
    expect(mainResource(spec(), uris)).toEqual({
      primary: 'a.jar',
      mainClass: 'org.example.Pi',
      extraJars: ['b.jar'],
      extraPyFiles: ['h.py', 'main.py'],
    });
    expect(mainResource(py, uris)).toEqual({
      primary: 'main.py',
      extraJars: ['a.jar', 'b.jar'],
      extraPyFiles: ['h.py'],
    });
    expect(mainResource(spec({ role: 'runner' }), uris)).toEqual({
      primary: DEFAULT_RUNNER_PATH,
      extraJars: [...imageRunnerJars(), 'a.jar', 'b.jar'],
      extraPyFiles: ['h.py', 'main.py'],
    });
    expect(mainResource(spec({ role: 'runner' }), uris, '/r.py').primary).toBe('/r.py');
  });

  it('refuses a SCALA job without jars and a PYTHON job whose main file is not among its pyFiles', () => {
    const none = { jars: [], pyFiles: [], files: [], usesS3a: false, uploads: [] };
    expect(() => mainResource(spec(), none)).toThrow(/has no main jar/);
    const py = spec(
      {},
      { language: 'PYTHON', jobClass: 'main', artifacts: { jars: [], files: [], pyFiles: ['/x/other.py'] } },
    );
    expect(() => mainResource(py, { ...none, pyFiles: ['other.py'] })).toThrow(
      /no pyFile is named 'main' or 'main.py' \(pyFiles: other.py\)/,
    );
  });
});

describe('Spark properties', () => {
  it('parses defaultApplicationConfig as k=v or k v entries split by ; or lines, skipping comments', () => {
    expect(parseDefaultConf('a=1; b 2\n# c=3\n d = 4 ;;')).toEqual({ a: '1', b: '2', d: '4' });
    expect(parseDefaultConf(undefined)).toEqual({});
  });

  it('storage: endpoint with path-style access and region, nothing without a storage', () => {
    expect(storageConf(ctx())).toEqual({
      'spark.hadoop.fs.s3a.endpoint': 'http://minio:9000',
      'spark.hadoop.fs.s3a.path.style.access': 'true',
      'spark.hadoop.fs.s3a.endpoint.region': 'eu-1',
    });
    expect(
      storageConf(ctx(spec({}, { artifacts: { jars: ['https://r/a.jar'], files: [], pyFiles: [] } }), noStorage)),
    ).toEqual({});
  });

  it('driver: fixed ports, its service as host, the pod IP as bind address', () => {
    const c = ctx();
    expect(driverConf(c)).toEqual({
      'spark.kubernetes.submitInDriver': 'true',
      'spark.app.id': c.names.appId,
      'spark.driver.host': 'job-abc-1-driver-svc.jobs.svc',
      'spark.driver.bindAddress': '$(SPARK_DRIVER_BIND_ADDRESS)',
      'spark.driver.port': '7078',
      'spark.driver.blockManager.port': '7079',
    });
  });

  it('executors: labelled with the driver and the ids, and given the storage keys by secret reference only with keys', () => {
    expect(executorLabelConf(ctx())).toEqual({
      [`spark.kubernetes.executor.label.${Labels.DRIVER_ID}`]: 'job-abc-1',
      [`spark.kubernetes.executor.label.${Labels.JOB_ID}`]: 'abc',
    });
    expect(executorSecretConf(ctx())).toEqual({
      'spark.kubernetes.executor.secretKeyRef.AWS_ACCESS_KEY_ID': 'job-abc-1-storage:AWS_ACCESS_KEY_ID',
      'spark.kubernetes.executor.secretKeyRef.AWS_SECRET_ACCESS_KEY': 'job-abc-1-storage:AWS_SECRET_ACCESS_KEY',
    });
    const noKeys = { ...withKeys, storages: { minio: { sparkBucket: 'spark' } } };
    expect(executorSecretConf(ctx(spec(), noKeys))).toEqual({});
  });

  it('precedence: cluster defaults < memory settings < jobConfig < what the pod depends on; keys keep their first position', () => {
    const cluster = {
      ...withKeys,
      defaultApplicationConfig: 'spark.executor.memory=1g;spark.driver.port=1;spark.x=cluster',
    };
    const s = spec(
      {},
      {
        memorySettings: { dynamicAllocation: false, executorMemory: '2g' },
        jobConfig: { 'spark.x': 'job', 'spark.app.id': 'mine' },
      },
    );
    const c = ctx(s, cluster);
    const conf = sparkConf(c);
    expect(conf['spark.executor.memory']).toBe('2g');
    expect(conf['spark.x']).toBe('job');
    expect(conf['spark.driver.port']).toBe('7078');
    expect(conf['spark.app.id']).toBe(c.names.appId);
    expect(clusterDefaultConf(c)).toEqual({
      'spark.executor.memory': '1g',
      'spark.driver.port': '1',
      'spark.x': 'cluster',
    });
    const keys = Object.keys(conf);
    expect(keys.slice(0, 2)).toEqual(['spark.kubernetes.container.image', 'spark.jars.ivy']);
    expect(keys.indexOf('spark.driver.port')).toBeLessThan(keys.indexOf('spark.app.id'));
    expect(sparkConf(c, CONF_PARTS.slice(0, 1))).toEqual({
      'spark.kubernetes.container.image': 'apache/spark:3.5.7',
      'spark.jars.ivy': '/tmp/.ivy2',
    });
  });
});

describe('spark-submit arguments', () => {
  it('escapes $ so Kubernetes does not expand $(VAR) in user values, except in our bind address', () => {
    expect(noExpansion('a$(B)$')).toBe('a$$(B)$$');
    const args = confOptions(ctx(), {
      'spark.x': '$(HOME)',
      'spark.driver.bindAddress': '$(SPARK_DRIVER_BIND_ADDRESS)',
    });
    expect(args).toEqual([
      '--conf',
      'spark.x=$$(HOME)',
      '--conf',
      'spark.driver.bindAddress=$(SPARK_DRIVER_BIND_ADDRESS)',
    ]);
  });

  it('adds hadoop-aws for s3a artifacts unless the job brings its own', () => {
    expect(packagesOption(ctx(), {})).toEqual(['--packages', HADOOP_AWS_PACKAGE]);
    const own = spec({}, { packages: ['org.apache.hadoop:hadoop-aws:3.3.6'] });
    expect(packagesOption(ctx(own), {})).toEqual(['--packages', 'org.apache.hadoop:hadoop-aws:3.3.6']);
    const http = spec({}, { artifacts: { jars: ['https://r/a.jar'], files: [], pyFiles: [] } });
    expect(packagesOption(ctx(http, noStorage), {})).toEqual([]);
  });

  it('composes client mode, class, conf, lists and the primary resource with its args, in that order', () => {
    const s = spec(
      {},
      {
        args: ['10', '$x'],
        artifacts: { jars: ['/srv/artifacts/a.jar', '/srv/artifacts/b.jar'], files: ['/srv/artifacts/f'], pyFiles: [] },
      },
    );
    const c = ctx(s);
    expect(classOption(c, {})).toEqual(['--class', 'org.example.Pi']);
    expect(submitArgs(c, { 'spark.a': '1' })).toEqual([
      '--master',
      'k8s://https://kubernetes.default.svc',
      '--deploy-mode',
      'client',
      '--name',
      'pi',
      '--class',
      'org.example.Pi',
      '--conf',
      'spark.a=1',
      '--packages',
      HADOOP_AWS_PACKAGE,
      '--jars',
      's3a://spark/artifacts/b.jar',
      '--files',
      's3a://spark/artifacts/f',
      's3a://spark/artifacts/a.jar',
      '10',
      '$$x',
    ]);
  });
});

describe('environment', () => {
  it('binds to the pod IP, passes the spec env except reserved names, and refers to the storage secret', () => {
    const s = spec({ env: { TEAM: 'a$b', SPARK_DRIVER_BIND_ADDRESS: 'x', AWS_ACCESS_KEY_ID: 'leak' } });
    const env = driverEnv(ctx(s));
    expect(env.map((e) => e.name)).toEqual([
      'SPARK_DRIVER_BIND_ADDRESS',
      'TEAM',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
    ]);
    expect(env[0].valueFrom?.fieldRef?.fieldPath).toBe('status.podIP');
    expect(env[1].value).toBe('a$$b');
    expect(env[2]).toEqual({
      name: 'AWS_ACCESS_KEY_ID',
      valueFrom: { secretKeyRef: { name: 'job-abc-1-storage', key: 'AWS_ACCESS_KEY_ID' } },
    });
    expect(JSON.stringify(env)).not.toContain('leak');
  });

  it('without storage keys, AWS variables of the spec pass through and no secret is referred to', () => {
    const s = spec(
      { env: { AWS_ACCESS_KEY_ID: 'own' } },
      { artifacts: { jars: ['https://r/a.jar'], files: [], pyFiles: [] } },
    );
    expect(specEnv(ctx(s, noStorage))).toEqual([{ name: 'AWS_ACCESS_KEY_ID', value: 'own' }]);
    expect(storageKeyEnv(ctx(s, noStorage))).toEqual([]);
  });

  it('gives a runner its direct channel: the pod IP to listen on and the secret from the driver’s secret only', () => {
    const key = 'ab'.repeat(32);
    const runner = spec(
      { role: 'runner', driverId: 'inst-7', env: { RUNNER_DIRECT_SECRET: 'forged' } },
      { artifacts: { jars: ['https://r/a.jar'], files: [], pyFiles: [] } },
    );
    const c = manifestContext(runner, { cluster: noStorage, config: { ...config, SECRET_KEY: key } });
    const env = driverEnv(c);
    expect(env.find((e) => e.name === 'RUNNER_DIRECT_HOST')?.valueFrom?.fieldRef?.fieldPath).toBe('status.podIP');
    expect(env.filter((e) => e.name === 'RUNNER_DIRECT_SECRET')).toEqual([
      {
        name: 'RUNNER_DIRECT_SECRET',
        valueFrom: { secretKeyRef: { name: 'inst-7-storage', key: 'RUNNER_DIRECT_SECRET' } },
      },
    ]);
    // The secret is in the Secret object (a cluster without storage keys gets one for it), never in the pod.
    expect(secretManifest(c)?.stringData).toEqual({ RUNNER_DIRECT_SECRET: directSecret(key, 'inst-7') });
    const all = buildDriverManifests(runner, { cluster: noStorage, config: { ...config, SECRET_KEY: key } });
    expect(all.secret?.stringData?.RUNNER_DIRECT_SECRET).toBe(directSecret(key, 'inst-7'));
    expect(JSON.stringify(all.pod)).not.toContain(directSecret(key, 'inst-7'));
    expect(JSON.stringify(env)).not.toContain('forged');
    // With storage keys, one secret holds both.
    const both = manifestContext(runner, { cluster: withKeys, config: { ...config, SECRET_KEY: key } });
    expect(Object.keys(secretManifest(both)!.stringData!)).toEqual([
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'RUNNER_DIRECT_SECRET',
    ]);
    // Applications have no channel; neither has a runner when the adapter has no SECRET_KEY.
    const app = manifestContext(spec({}, { artifacts: runner.spark.artifacts }), {
      cluster: noStorage,
      config: { ...config, SECRET_KEY: key },
    });
    expect(driverEnv(app).map((e) => e.name)).not.toContain('RUNNER_DIRECT_HOST');
    expect(driverEnv(ctx(runner, noStorage)).map((e) => e.name)).not.toContain('RUNNER_DIRECT_HOST');
  });

  it('refuses an invalid variable name permanently', () => {
    expect(() => specEnv(ctx(spec({ env: { 'BAD NAME': 'x' } })))).toThrow(
      expect.objectContaining({ type: 'InvalidSpec', message: "invalid environment variable name 'BAD NAME'" }),
    );
  });
});

describe('objects', () => {
  it('reads JVM sizes in MiB and refuses what is not one', () => {
    expect(jvmMiB('2g', 'f')).toBe(2048);
    expect(jvmMiB('512m', 'f')).toBe(512);
    expect(jvmMiB('1024', 'f')).toBe(1024);
    expect(jvmMiB('2048k', 'f')).toBe(2);
    expect(() => jvmMiB('lots', 'spark.driver.memory')).toThrow(/invalid spark.driver.memory 'lots'/);
  });

  it('sizes the driver container as Spark would: heap + max(10%, 384Mi), driver cores unless request/limit cores are set', () => {
    // No CPU limit unless spark.kubernetes.driver.limit.cores asks for one.
    expect(driverResources({})).toEqual({
      requests: { cpu: '1', memory: '1408Mi' },
      limits: { memory: '1408Mi' },
    });
    expect(
      driverResources({
        'spark.driver.memory': '8g',
        'spark.driver.cores': '2',
        'spark.kubernetes.driver.limit.cores': '3',
      }),
    ).toEqual({
      requests: { cpu: '2', memory: '9011Mi' },
      limits: { cpu: '3', memory: '9011Mi' },
    });
    expect(driverResources({ 'spark.driver.memoryOverhead': '1g' }).limits).toEqual({ memory: '2048Mi' });
  });

  it('pod: spark-submit with the given args and env, labelled as Spark labels a driver, with the service account asked for', () => {
    const c = ctx();
    const conf = { 'spark.app.id': c.names.appId, 'spark.kubernetes.authenticate.driver.serviceAccountName': 'spark' };
    const pod = podManifest(c, conf, ['--x'], []);
    expect(pod.metadata).toMatchObject({
      name: 'job-abc-1-driver',
      namespace: 'jobs',
      annotations: { [Labels.DRIVER_ID]: 'job-abc-1' },
    });
    expect(pod.metadata?.labels).toMatchObject({
      [Labels.SPARK_ROLE]: 'driver',
      [Labels.SPARK_APP_SELECTOR]: c.names.appId,
      [Labels.JOB_ID]: 'abc',
    });
    expect(pod.spec).toMatchObject({ restartPolicy: 'Never', serviceAccountName: 'spark' });
    expect(pod.spec?.containers[0]).toMatchObject({
      command: ['/opt/spark/bin/spark-submit'],
      args: ['--x'],
      env: [],
      image: 'apache/spark:3.5.7',
    });
  });

  it('service: headless, publishing not-ready addresses, selecting the driver pod; secret only with storage keys', () => {
    const svc = serviceManifest(ctx());
    expect(svc.spec).toMatchObject({
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { [Labels.DRIVER_ID]: 'job-abc-1', [Labels.SPARK_ROLE]: 'driver' },
    });
    expect(svc.spec?.ports?.map((p) => p.port)).toEqual([7078, 7079, 4040]);
    expect(secretManifest(ctx())?.stringData).toEqual({ AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' });
    expect(
      secretManifest(ctx(spec({}, { artifacts: { jars: ['https://r/a.jar'], files: [], pyFiles: [] } }), noStorage)),
    ).toBeUndefined();
  });
});

describe('pod status', () => {
  const pod = (phase: string | undefined, state: object = {}, extra: object = {}) =>
    ({
      metadata: { name: 'p', labels: { [Labels.SPARK_APP_SELECTOR]: 'spark-1' } },
      status: { phase, containerStatuses: [{ name: 'spark-driver', state }], ...extra },
    }) as never;

  it('maps the pod phase, with the app id, start and end times', () => {
    expect(podStatus(pod('Pending'))).toEqual({ phase: 'PENDING', appId: 'spark-1' });
    expect(podStatus(pod('Running', { running: { startedAt: new Date(1000) } }))).toEqual({
      phase: 'RUNNING',
      appId: 'spark-1',
      startTime: 1000,
    });
    expect(
      podStatus(
        pod('Succeeded', { terminated: { exitCode: 0, startedAt: new Date(1000), finishedAt: new Date(2000) } }),
      ),
    ).toEqual({
      phase: 'SUCCEEDED',
      appId: 'spark-1',
      startTime: 1000,
      endTime: 2000,
      exitCode: 0,
    });
  });

  it('FAILED with the reason in words: a terminated container, a failed pod, an image that cannot be pulled', () => {
    expect(
      podStatus(pod('Failed', { terminated: { exitCode: 3, reason: 'Error', message: ' boom\n' } })),
    ).toMatchObject({ phase: 'FAILED', exitCode: 3, message: 'Error: boom (exit code 3)' });
    expect(podStatus(pod('Failed', {}, { reason: 'Evicted', message: 'low memory' }))).toMatchObject({
      phase: 'FAILED',
      message: 'Evicted: low memory',
    });
    expect(podStatus(pod('Pending', { waiting: { reason: 'InvalidImageName', message: 'bad' } }))).toMatchObject({
      phase: 'FAILED',
      message: 'InvalidImageName: bad',
    });
    expect(podStatus(pod('Pending', { waiting: { reason: 'ContainerCreating' } })).phase).toBe('PENDING');
  });

  it('UNKNOWN for a phase it does not know', () => {
    expect(podStatus(pod(undefined))).toMatchObject({ phase: 'UNKNOWN', message: 'driver pod p is in phase (none)' });
  });
});

describe("a cluster's namespace and Spark image", () => {
  const teamB: K8sCluster = { ...withKeys, namespace: 'team-b', sparkImage: 'registry.example:5000/team/spark:3.5.7' };

  it('place every object of a new driver in the cluster namespace, with its image; K8S_* when unset', () => {
    const m = buildDriverManifests(spec(), { cluster: teamB, config });
    for (const o of [m.pod, m.service, m.secret]) expect(o?.metadata?.namespace).toBe('team-b');
    expect(m.pod.spec!.containers[0].image).toBe('registry.example:5000/team/spark:3.5.7');
    const args = m.pod.spec!.containers[0].args!.join(' ');
    expect(args).toContain('spark.kubernetes.namespace=team-b');
    expect(args).toContain('spark.kubernetes.container.image=registry.example:5000/team/spark:3.5.7');
    const plain = buildDriverManifests(spec(), { cluster: withKeys, config });
    expect(plain.pod.metadata!.namespace).toBe('jobs');
    expect(plain.pod.spec!.containers[0].image).toBe('apache/spark:3.5.7');
  });

  it("a driver's recorded namespace wins over the cluster's", () => {
    const m = buildDriverManifests(spec(), { cluster: teamB, config, namespace: 'team-a' });
    expect(m.pod.metadata!.namespace).toBe('team-a');
    expect(m.pod.spec!.containers[0].args!.join(' ')).toMatch(/spark\.driver\.host=[^ ]+\.team-a\.svc/);
  });

  it("a job's own image property still wins over the cluster's image", () => {
    const m = buildDriverManifests(spec({}, { jobConfig: { 'spark.kubernetes.container.image': 'mine/spark:1' } }), {
      cluster: teamB,
      config,
    });
    expect(m.pod.spec!.containers[0].image).toBe('mine/spark:1');
  });

  it.each([
    ['apache/spark:3.5.7-python3', true],
    ['spark', true],
    ['localhost:5000/spark', true],
    ['registry.example.com/team/spark-py:v1.2_3', true],
    [`ghcr.io/org/spark@sha256:${'0'.repeat(64)}`, true],
    [`ghcr.io/org/spark:3.5@sha256:${'f'.repeat(64)}`, true],
    ['not an image', false],
    ['spark:', false],
    ['https://registry/spark', false],
    ['Spark/Image', false],
    ['spark:bad tag', false],
    ['spark@sha256:123', false],
  ])('image reference %s: %s', (ref, ok) => {
    expect(IMAGE_REFERENCE.test(ref)).toBe(ok);
  });

  it.each([
    ['team-b', true],
    ['a', true],
    ['Team-b', false],
    ['-b', false],
    ['b-', false],
    ['team_b', false],
  ])('namespace %s: %s', (ns, ok) => {
    expect(K8S_NAMESPACE_NAME.test(ns)).toBe(ok);
  });
});

describe('event log (event-logs.ts)', () => {
  const confOf = (m: ReturnType<typeof buildDriverManifests>) => {
    const args = m.pod.spec!.containers[0].args!;
    return args.flatMap((a, i) => (args[i - 1] === '--conf' ? [a] : []));
  };
  const ours = 'registry.example.com/driver:1';

  it("goes to the cluster's spark bucket when the image reads s3a, and launch makes its folder", () => {
    const m = buildDriverManifests(spec(), { cluster: withKeys, config: { ...config, K8S_SPARK_IMAGE: ours } });
    expect(m.eventLogBucket).toBe('spark');
    expect(confOf(m)).toEqual(
      expect.arrayContaining(['spark.eventLog.enabled=true', `spark.eventLog.dir=s3a://spark/${EVENT_LOG_PREFIX}`]),
    );
  });

  it('on a stock image, only when the driver gets hadoop-aws anyway for its artifacts', () => {
    // Its jar is in the artifact store, so it is read over s3a: hadoop-aws comes with --packages.
    expect(buildDriverManifests(spec(), { cluster: withKeys, config }).eventLogBucket).toBe('spark');
    const fromUrl = spec({}, { artifacts: { jars: ['https://repo/x.jar'], files: [], pyFiles: [] } });
    const m = buildDriverManifests(fromUrl, { cluster: withKeys, config });
    expect(m.eventLogBucket).toBeUndefined();
    expect(confOf(m).filter((c) => c.startsWith('spark.eventLog.'))).toEqual([]);
  });

  it("keeps a job's or cluster's own event log settings, and needs a bucket", () => {
    const own = spec({}, { jobConfig: { 'spark.eventLog.enabled': 'false' } });
    const m = buildDriverManifests(own, { cluster: withKeys, config: { ...config, K8S_SPARK_IMAGE: ours } });
    expect(m.eventLogBucket).toBeUndefined();
    expect(confOf(m)).toContain('spark.eventLog.enabled=false');
    expect(confOf(m).some((c) => c.startsWith('spark.eventLog.dir='))).toBe(false);
    const fromUrl = spec({}, { artifacts: { jars: ['https://repo/x.jar'], files: [], pyFiles: [] } });
    expect(eventLogBucket(ctx(fromUrl, noStorage, { config: { ...config, K8S_SPARK_IMAGE: ours } }), {})).toBe(
      undefined,
    );
  });
});
