// Artifacts of k8s drivers, for real: launch uploads a PYTHON job's files to an S3-compatible server
// (moto's server mode) through the AWS SDK, creates the pod on the real API server (testkit/kube, with the Helm
// chart's RBAC and the service's TokenRequest token), and the kubelet stand-in runs the pod the adapter made
// (testkit/pod-runner.ts, pyspark's Spark standing for the image's): its spark-submit reads
// the main file, a --py-files module, a --files file and a data file over s3a, with exactly the s3a
// properties and storage keys (from the driver's secret) the adapter generated. Only the master (local)
// and the driver's address change; the image's hadoop-aws jars come from the cache scripts/setup.sh
// fills. The adapter follows the pod to SUCCEEDED, reads its log, and still reads it after remove.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createK8sAdapter } from '../../activities/adapters/k8s/adapter';
import { removeArtifacts, s3ObjectStore, SMALL_FILE } from '../../activities/adapters/k8s/artifact-store';
import { buildDriverManifests } from '../../activities/adapters/k8s/manifests';
import { k8sNames } from '../../activities/adapters/k8s/names';
import type { K8sCluster } from '../../activities/adapters/k8s/options';
import type { DriverSpec } from '../../domain/driver';
import { loadConfig } from '../../lib/config';
import { helmAvailable, installChartRbac } from '../../testkit/kube/chart-rbac';
import { k8sAvailable, kubeRequest, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startKubelet, type Kubelet } from '../../testkit/kube/kubelet';
import { K8S_SETUP_TIMEOUT_MS, sharedControlPlane } from '../../testkit/kube/shared';
import { motoAvailable, startMoto, type MotoServer } from '../../testkit/moto';
import type { PodRunOptions } from '../../testkit/pod-runner';
import { until } from '../../testkit/wait';
import { sparkSpec } from '../../testkit/spark-spec';

let NS: string;
const BUCKET = 'spark-bucket';
const ACCESS_KEY = 'AKIAMOTOTESTKEY1';
const SECRET_KEY = 'moto/secret+key/123';
const CACHE =
  process.env.SPARK_ORCH_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? '/root', '.cache'), 'spark-orchestrator');
const S3A_JARS = path.join(CACHE, 'hadoop-aws-3.3.4');
const ready =
  motoAvailable() && existsSync(path.join(S3A_JARS, 'hadoop-aws-3.3.4.jar')) && k8sAvailable() && helmAvailable();

const MAIN = `import sys
from pyspark import SparkFiles
from pyspark.sql import SparkSession
from helper import greeting
spark = SparkSession.builder.getOrCreate()
words = open(SparkFiles.get("words.txt")).read().split()
n = spark.sparkContext.parallelize(words, 2).count()
lines = spark.read.text(sys.argv[1]).count()
print(f"RESULT {greeting()} words={n} lines={lines}")
spark.stop()
`;

describe.skipIf(!ready)('k8s artifacts through an S3-compatible server, read over s3a by spark-submit', () => {
  let moto: MotoServer;
  let cp: ControlPlaneInfo;
  let kubelet: Kubelet;
  /** The pod as the API server holds it (undefined once it is gone). */
  const podNamed = async (name: string) => {
    const r = await kubeRequest(cp, cp.adminToken, 'GET', `/api/v1/namespaces/${NS}/pods/${name}`);
    return r.status === 200 ? (r.body as { spec: { containers: { args: string[] }[] } }) : undefined;
  };
  const gone = (name: string) => until(`pod ${name} gone`, async () => !(await podNamed(name)), 30_000);
  let dir: string;
  let s3: S3Client;
  let cluster: K8sCluster;
  const local = loadConfig({ ...process.env });
  /** How the kubelet runs the pod of job s3a1. */
  const kubelet0: Omit<PodRunOptions, 'secrets'> = {
    sparkHome: local.SPARK_HOME,
    flags: { '--master': 'local[1]' },
    conf: {
      'spark.driver.host': '127.0.0.1',
      'spark.ui.enabled': 'false',
      // The driver image's /opt/spark/jars hold hadoop-aws and its AWS SDK: here, the setup cache.
      'spark.driver.extraClassPath': `${S3A_JARS}/*`,
    },
    env: { PYSPARK_PYTHON: local.PYTHON, PYSPARK_DRIVER_PYTHON: local.PYTHON },
  };

  beforeAll(async () => {
    [moto, cp] = await Promise.all([startMoto(), sharedControlPlane(inject('testDir'))]);
    const release = await installChartRbac(cp, 's3a', 's3a-release');
    NS = release.driverNamespace;
    kubelet = await startKubelet({
      cp,
      nodeName: 'node-s3a',
      namespaces: [NS],
      dir: path.join(inject('testDir'), 'kubelet-s3a'),
      // Job s3a1's pod runs for real; the others' are held running.
      plan: (pod) =>
        pod.metadata?.labels?.['spark-orchestrator.io/job-id'] === 's3a1' ? { run: kubelet0 } : { hold: ['held'] },
    });
    dir = mkdtempSync(path.join(tmpdir(), 'k8s-s3a-'));
    s3 = new S3Client({
      endpoint: moto.endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    cluster = {
      name: 'k8s-s3',
      url: cp.url,
      caCert: cp.caCert,
      token: release.token,
      sparkStorage: 's3',
      storages: {
        s3: {
          sparkBucket: BUCKET,
          endpoint: moto.endpoint,
          region: 'us-east-1',
          accessKey: ACCESS_KEY,
          secretKey: SECRET_KEY,
        },
      },
    };
  }, K8S_SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([moto?.stop(), kubelet?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const config = () => ({
    K8S_SPARK_IMAGE: 'registry.example.com/spark-orchestrator-driver:test',
    K8S_NAMESPACE: NS,
    ARTIFACT_DIR: path.join(dir, 'artifacts'),
  });

  /** A job's uploads as the API stores them: ARTIFACT_DIR/<jobId>/<kind>/<file>. */
  function storeFile(jobId: string, kind: string, name: string, text: string): string {
    const p = path.join(dir, 'artifacts', jobId, kind, name);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, text);
    return p;
  }

  function pythonJob(jobId: string, dataUri: string): DriverSpec {
    return {
      driverId: `job-${jobId}-1`,
      role: 'application',
      env: {},
      labels: { jobId },
      spark: sparkSpec({
        name: 's3a-read',
        clusterName: 'k8s-s3',
        jobClass: 'main',
        args: [dataUri],
        memorySettings: { dynamicAllocation: false, driverMemory: '512m' },
        artifacts: {
          jars: [],
          pyFiles: [
            storeFile(jobId, 'pyFiles', 'main.py', MAIN),
            storeFile(jobId, 'pyFiles', 'helper.py', 'def greeting():\n    return "hello-from-s3a"\n'),
          ],
          files: [storeFile(jobId, 'files', 'words.txt', 'one two three four five\n')],
        },
      }),
    };
  }

  it('uploads before the pod exists; the pod runs for real and reads everything over s3a; its log outlives it', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'data/lines.txt', Body: 'a\nb\nc\n' }));
    const spec = pythonJob('s3a1', `s3a://${BUCKET}/data/lines.txt`);
    const adapter = createK8sAdapter({ cluster, config: { ...config(), STACK_DIR: dir } });
    expect((await adapter.launch(spec)).phase).toBe('PENDING');

    // In the bucket, under the keys the pod's arguments name.
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'artifacts/s3a1/' }));
    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual([
      'artifacts/s3a1/files/words.txt',
      'artifacts/s3a1/pyFiles/helper.py',
      'artifacts/s3a1/pyFiles/main.py',
    ]);
    const main = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'artifacts/s3a1/pyFiles/main.py' }));
    expect(await main.Body!.transformToString()).toBe(MAIN);

    const n = k8sNames(spec.driverId);
    const args = (await podNamed(n.pod))!.spec.containers[0].args;
    expect(args).toEqual(buildDriverManifests(spec, { cluster, config: config() }).pod.spec!.containers[0].args);
    expect(args).not.toContain('--packages'); // the driver image has hadoop-aws
    expect(args).toContain(`spark.hadoop.fs.s3a.endpoint=${moto.endpoint}`);
    expect(args).toContain('spark.hadoop.fs.s3a.path.style.access=true');
    expect(args.at(-2)).toBe(`s3a://${BUCKET}/artifacts/s3a1/pyFiles/main.py`);
    expect(args.join(' ')).not.toContain(SECRET_KEY); // the keys come from the secret, through the env

    const end = await until(
      'the driver pod ended',
      async () => {
        const st = await adapter.status(spec.driverId);
        return st.phase === 'SUCCEEDED' || st.phase === 'FAILED' ? st : undefined;
      },
      240_000,
      500,
    );
    const [driverLog] = await adapter.logs(spec.driverId, { from: 0, size: 100_000 });
    expect(end.phase, driverLog.log.slice(-40).join('\n')).toBe('SUCCEEDED');
    // Within the log, not as a whole line: Python's print is two writes, and a log4j line can come between.
    expect(driverLog.log.join('\n')).toContain('RESULT hello-from-s3a words=5 lines=3');

    await adapter.remove(spec.driverId);
    await gone(n.pod);
    const [saved] = await adapter.logs(spec.driverId, { from: 0, size: 100_000 });
    expect(saved).toMatchObject({ name: n.pod, role: 'driver', state: 'Succeeded' });
    expect(saved.log.join('\n')).toContain('RESULT hello-from-s3a words=5 lines=3');
  }, 300_000);

  it('a second launch sends no large file again; removeArtifacts deletes an owner’s objects', async () => {
    const base = pythonJob('s3a2', `s3a://${BUCKET}/data/lines.txt`);
    const big = storeFile('s3a2', 'files', 'big.bin', 'x'.repeat(SMALL_FILE));
    const spec = { ...base, spark: { ...base.spark, artifacts: { ...base.spark.artifacts, files: [big] } } };
    const store = s3ObjectStore(cluster.storages!.s3);
    const puts: string[] = [];
    const counting = { ...store, put: (b: string, k: string, f: string) => (puts.push(k), store.put(b, k, f)) };
    const adapter = createK8sAdapter({ cluster, config: config(), objectStore: counting });
    const stamp = async () =>
      (await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'artifacts/s3a2/files/' }))).Contents?.map(
        (o) => [o.Key, o.LastModified?.getTime(), o.Size],
      );
    await adapter.launch(spec);
    const first = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'artifacts/s3a2/' }));
    expect(first.KeyCount).toBe(3);
    const before = await stamp();
    expect(before).toEqual([['artifacts/s3a2/files/big.bin', expect.any(Number), SMALL_FILE]]);
    // Later than the first write's second: a new write of the big file would show a newer LastModified.
    await new Promise((r) => setTimeout(r, 1100));
    await adapter.launch({ ...spec, driverId: 'job-s3a2-2' });
    expect(await stamp()).toEqual(before); // asked, same size: not sent again
    expect(puts).toHaveLength(6); // each file handed to the store on each launch; the small ones put again

    await removeArtifacts(store, BUCKET, 's3a2');
    expect((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'artifacts/s3a2/' }))).KeyCount).toBe(0);
    expect((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'artifacts/s3a1/' }))).KeyCount).toBe(3);
  });

  it('a missing bucket or a missing upload fails the launch for good, before any pod', async () => {
    const noBucket: K8sCluster = {
      ...cluster,
      storages: { s3: { ...cluster.storages!.s3, sparkBucket: 'no-such-bucket' } },
    };
    const spec = pythonJob('s3a3', 's3a://x/y');
    const err = await createK8sAdapter({ cluster: noBucket, config: config() })
      .launch({ ...spec, driverId: 'job-s3a3-1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
    expect((err as Error).message).toContain('NoSuchBucket');
    expect((err as Error).message).not.toContain(SECRET_KEY);
    expect(await podNamed(k8sNames('job-s3a3-1').pod)).toBeUndefined();

    rmSync(spec.spark.artifacts.files[0]);
    const gone = await createK8sAdapter({ cluster, config: config() })
      .launch({ ...spec, driverId: 'job-s3a3-2' })
      .catch((e: unknown) => e);
    expect(gone).toMatchObject({ type: 'InvalidSpec', nonRetryable: true });
    expect((gone as Error).message).toMatch(/words.txt is missing from the artifact store/);
  });
});
