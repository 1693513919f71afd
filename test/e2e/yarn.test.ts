// Clusters of type `yarn` against a real single-node YARN (testkit/yarn: Apache Hadoop 3.3.4's ResourceManager
// and NodeManager on loopback, started once for the file). Through the whole service: the cluster's fields
// checked, then the ResourceManager stopped mid-job (the job UNKNOWN with the cause, then FINISHED once the
// ResourceManager is back and has recovered its applications). Then, side by side, the adapter contract
// (testkit/adapter-contract.ts: jobs in cluster mode, a group's runner driver, the SPARK_SQL engine in client mode,
// a broken cluster) with what only YARN has (each driver a YARN application: its id as appId, KILLED on remove,
// ended drivers' logs from the aggregated files; the engine's executors an application in the cluster's queue),
// and a SCALA group through the service running a Scala job class. The daemons' and spark-submit's output goes to
// files, never to the test log. Skipped without the jars (scripts/setup-yarn.sh) or a JDK.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createYarnAdapter } from '../../activities/adapters/yarn/adapter';
import { yarnTag, type YarnAdapterOptions } from '../../activities/adapters/yarn/submit-args';
import { loadConfig } from '../../lib/config';
import { adapterContract, contractSpec, TEST_JVM_CONF } from '../../testkit/adapter-contract';
import { startYarn, yarnAvailable, type YarnCluster } from '../../testkit/yarn/cluster';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const ready = yarnAvailable();
const MEMORY_MB = 12288;
let y: YarnCluster;
let h: Harness;
let clusterId: string | undefined;
/** A Scala job class (cloud.ilum.job.Job), compiled while YARN starts. */
let scalaJar: Buffer;
const work = mkdtempSync(path.join(os.tmpdir(), 'yarn-test-'));

const SCALA_JOB = `package jobs
import cloud.ilum.job.Job
import org.apache.spark.sql.SparkSession

class SumTo extends Job {
  override def run(spark: SparkSession, config: Map[String, Any]): Option[String] = {
    val n = config("n").toString.toLong
    Some(spark.range(1, n + 1).selectExpr("sum(id)").first().getLong(0).toString)
  }
}
`;

/** scalac of pyspark's jars, against Ilum's job interface, into a jar. */
async function buildScalaJar(stackDir: string, sparkHome: string): Promise<Buffer> {
  const run = (cmd: string, args: string[]) =>
    new Promise<void>((resolve, reject) =>
      execFile(cmd, args, (e, _out, err) => (e ? reject(new Error(`${cmd}: ${err}`)) : resolve())),
    );
  const [src, classes, jar] = ['SumTo.scala', 'classes', 'jobs.jar'].map((f) => path.join(work, f));
  writeFileSync(src, SCALA_JOB);
  mkdirSync(classes);
  const jobApi = path.join(stackDir, 'jvm', 'ilum-job-api-6.0.0.jar');
  const sparkJars = path.join(sparkHome, 'jars', '*');
  await run('java', ['-cp', sparkJars, 'scala.tools.nsc.Main', '-usejavacp', '-classpath', jobApi, '-d', classes, src]);
  await run('jar', ['cf', jar, '-C', classes, '.']);
  return readFileSync(jar);
}

/** Keeps the job's Spark on loopback too (its driver's RPC and block manager), and without a UI. */
const LOOPBACK_DEFAULTS = [
  'spark.ui.enabled=false',
  'spark.yarn.appMasterEnv.SPARK_LOCAL_IP=127.0.0.1',
  'spark.executorEnv.SPARK_LOCAL_IP=127.0.0.1',
  // Less CPU on the JVMs' start-up (the drivers', executors' and application masters').
  ...Object.entries(TEST_JVM_CONF).map(([k, v]) => `${k}=${v}`),
].join(';');

beforeAll(async () => {
  if (!ready) return;
  [y, h] = await Promise.all([
    // Log aggregation on: ended applications' logs are read from the aggregated files (the clusters' hadoopConf,
    // y.clientConf, turns it on for the client too). Room for the last part's drivers side by side: 12 containers
    // of 1 GiB (a 512m heap and Spark's 384m overhead, rounded up).
    startYarn({ logAggregation: true, memoryMb: MEMORY_MB }),
    startHarness().then(async (started) => {
      scalaJar = await buildScalaJar(started.config.STACK_DIR, started.config.SPARK_HOME);
      return started;
    }),
  ]);
  const c = await call(h, 'POST', '/cluster', {
    name: 'yarn',
    type: 'yarn',
    url: y.rmUrl,
    resourceManagerAddress: y.rmAddress,
    hadoopConf: y.clientConf,
    queue: 'default',
    defaultApplicationConfig: LOOPBACK_DEFAULTS,
  });
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  clusterId = c.body.clusterId as string;
}, 240_000);
afterAll(async () => {
  await h?.stop();
  await y?.stop();
  // The drivers' folders the adapter kept on this host (STACK_DIR/yarn/<clusterId>).
  if (h && clusterId) rmSync(path.join(h.config.STACK_DIR, 'yarn', clusterId), { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

const APP = `import sys, time
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
time.sleep(int(sys.argv[2]))
n = int(sys.argv[1])
print(f"RESULT total={spark.sparkContext.parallelize(range(1, n + 1), 2).map(lambda x: x * x).sum()}")
spark.stop()
`;

/** A small PySpark job (one executor, 512m containers) computing the sum of squares to n after a pause. */
const submit = (name: string, n: number, pauseS: number, extra: Record<string, string> = {}) =>
  call(
    h,
    'POST',
    '/job/submit',
    form(
      {
        name,
        language: 'PYTHON',
        jobClass: 'main',
        clusterName: 'yarn',
        args: `${n};${pauseS}`,
        executors: '1',
        driverMemory: '512m',
        executorMemory: '512m',
        ...extra,
      },
      { pyFiles: [{ name: 'main.py', content: APP }] },
    ),
  );

const job = async (id: string) => (await call(h, 'GET', `/job/${id}`)).body;
const rmApp = async (appId: string) =>
  (
    (await (await fetch(`${y.rmUrl}/ws/v1/cluster/apps/${appId}`)).json()) as {
      app: { state: string; finalStatus: string; amContainerLogs: string };
    }
  ).app;
const inState = (id: string, states: string[], timeoutMs = 180_000) =>
  eventually(
    async () => {
      const j = await job(id);
      if (['FAILED', 'FINISHED', 'CANCELED'].includes(j.state) && !states.includes(j.state))
        throw Object.assign(new Error(`job ended: ${JSON.stringify(j)}`), { fatal: true });
      return states.includes(j.state) ? j : undefined;
    },
    timeoutMs,
    250,
  );

describe.skipIf(!ready)('a yarn cluster on a real ResourceManager and NodeManager', () => {
  it('is a cluster type with its own fields; what would reach other hosts, grant access or leave the queue answers 409, what the queue can never give 402', async () => {
    const types = (await call(h, 'GET', '/cluster/types')).body.types as {
      type: string;
      settings: string[];
      sqlEngines: string[];
    }[];
    expect(types.find((t) => t.type === 'yarn')).toMatchObject({
      sparkDeployMode: 'cluster',
      namespaces: false,
      settings: expect.arrayContaining(['hadoopConf', 'queue', 'resourceManagerAddress']),
    });
    const names = (await call(h, 'GET', '/cluster?size=100')).body.content as Record<string, unknown>[];
    expect(names.find((c) => c.name === 'yarn')).toMatchObject({
      type: 'yarn',
      sparkMaster: 'yarn',
      sparkDeployMode: 'cluster',
      url: y.rmUrl,
      queue: 'default',
      hadoopConf: y.clientConf,
    });
    const base = { type: 'yarn', url: y.rmUrl };
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ hadoopConf: { 'hadoop.security.authentication': 'kerberos' } }, /hadoop\.security\.authentication/],
      [{ hadoopConf: { 'yarn.resourcemanager.scheduler.address': '10.1.2.3:8030' } }, /names host 10\.1\.2\.3/],
      [{ hadoopConf: { 'fs.s3a.secret.key': 'x' } }, /holds a secret/],
      [{ resourceManagerAddress: 'elsewhere.example.com:8032' }, /names host elsewhere/],
      [{ namespace: 'team-a' }, /is a setting of k8s clusters only/],
      [{ url: 'rm:8088' }, /not an http\(s\) URL/],
      [{ defaultApplicationConfig: 'spark.yarn.queue=other' }, /spark\.yarn\.queue moves the driver/],
    ];
    for (const [fields, message] of refused) {
      const r = await call(h, 'POST', '/cluster', { name: 'yarn-bad', ...base, ...fields });
      expect(r.status, JSON.stringify(fields)).toBe(409);
      expect(r.body.message).toMatch(message);
    }
    const queue = await submit('elsewhere', 10, 0, { jobConfig: 'spark.yarn.queue=root.other' });
    expect(queue.status).toBe(409);
    expect(queue.body.message).toMatch(/spark\.yarn\.queue moves the driver to another queue/);
    // More than the queue can ever give: 402 at once, not an application waiting ACCEPTED for ever.
    const big = await submit('too-big', 10, 0, { executors: '20', executorMemory: '1g' });
    expect(big.status, JSON.stringify(big.body)).toBe(402);
    expect(big.body.message).toMatch(
      new RegExp(`above the ${MEMORY_MB}Mi queue 'default' of cluster 'yarn' can ever give`),
    );
    // SQL engines: SPARK_SQL only (the adapter contract launches one); TRINO is no YARN application, so the API
    // answers 409 before anything is launched.
    expect(types.find((t) => t.type === 'yarn')?.sqlEngines).toEqual(['SPARK_SQL']);
    const trino = await call(h, 'POST', `/sql/engine/${clusterId}`, { type: 'TRINO' });
    expect(trino.status, JSON.stringify(trino.body)).toBe(409);
  });

  it('with the ResourceManager stopped mid-job the job is UNKNOWN with the cause, then FINISHED once it is back', async () => {
    const r = await submit('through-restart', 10, 15);
    const id = r.body.jobId as string;
    const busy = await inState(id, ['BUSY']);
    await y.stopRm();
    const unknown = await inState(id, ['UNKNOWN'], 60_000);
    expect(unknown.error).toMatch(/ResourceManager of cluster 'yarn' cannot be asked: 127\.0\.0\.1:\d+ did not answer/);
    await y.startRm();
    // Work-preserving recovery: the same application goes on and ends.
    const done = await inState(id, ['FINISHED'], 240_000);
    expect(done.appId).toBe(busy.appId);
  }, 420_000);
});

describe.skipIf(!ready)(
  'on the real YARN, side by side: the adapter contract and a SCALA group through the service',
  () => {
    const local = loadConfig({ ...process.env });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'yarn-contract-'));
    const secretKey = randomBytes(32).toString('hex');
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const options = (url: string): YarnAdapterOptions => ({
      cluster: {
        id: 'contract',
        name: 'contract',
        url,
        resourceManagerAddress: url === y.rmUrl ? y.rmAddress : '127.0.0.1:1',
        hadoopConf: y.clientConf,
        defaultApplicationConfig: LOOPBACK_DEFAULTS,
      },
      config: { SPARK_HOME: local.SPARK_HOME, PYTHON: local.PYTHON, STACK_DIR: dir, SECRET_KEY: secretKey },
      requestTimeoutMs: 5_000,
    });
    /** The application a driver's launch submitted, found by its tag. */
    const appsOf = async (driverId: string) =>
      (
        (await (await fetch(`${y.rmUrl}/ws/v1/cluster/apps?applicationTags=${yarnTag(driverId)}`)).json()) as {
          apps: { app?: { id: string; state: string; queue: string; applicationType: string }[] } | null;
        }
      ).apps?.app ?? [];
    const killed = (appId: string) => eventually(async () => (await rmApp(appId)).state === 'KILLED', 60_000, 250);
    adapterContract(
      () => ({
        adapter: createYarnAdapter(options(y.rmUrl)),
        // A ResourceManager nobody listens for.
        broken: createYarnAdapter(options('http://127.0.0.1:1')),
        spec: (driverId, kind) => contractSpec(path.join(dir, 'app'), driverId, kind, 'contract'),
        timeoutMs: 240_000,
        clusterName: 'contract',
        temporal: { address: h.config.TEMPORAL_ADDRESS, namespace: h.config.TEMPORAL_NAMESPACE },
        secretKey,
        checks: {
          // The application's id is the appId, and its report the state; its driver's logs come from the aggregated
          // files (the NodeManager no longer serves an ended application's containers) and are kept in its folder.
          jobEnded: async (driverId, done) => {
            expect(done.appId).toMatch(/^application_\d+_\d+$/);
            const app = await rmApp(done.appId!);
            expect(app).toMatchObject({ state: 'FINISHED', finalStatus: 'SUCCEEDED' });
            // The id has an epoch part (container_e01_…) once the ResourceManager was restarted (the test above).
            const am = app.amContainerLogs.match(/container_(e\d+_)?[0-9_]+/)![0];
            expect((await fetch(`${y.nmUrl}/ws/v1/node/containerlogs/${am}/stdout`)).ok).toBe(false);
            expect(existsSync(path.join(dir, 'yarn', 'contract', driverId, 'aggregated-logs'))).toBe(true);
          },
          // Removing a running driver kills its application.
          jobRemoved: async (_driverId, running) => killed(running.appId!).then(() => undefined),
          runnerReady: async (_driverId, r) => expect(r.appId).toMatch(/^application_\d+_\d+$/),
          runnerRemoved: async (_driverId, r) => killed(r.appId!).then(() => undefined),
          // The engine's executors are YARN's: one application (Spark's ExecutorLauncher) in the cluster's queue,
          // which remove ends too.
          engineRunning: async (driverId) => {
            const apps = await appsOf(driverId);
            expect(
              apps.filter((x) => x.state === 'RUNNING'),
              JSON.stringify(apps),
            ).toMatchObject([{ queue: 'default', applicationType: 'SPARK' }]);
          },
          engineRemoved: async (driverId) => {
            await eventually(async () => (await appsOf(driverId)).every((x) => x.state !== 'RUNNING'), 60_000, 250);
          },
        },
      }),
      'yarn-contract',
    );

    it.concurrent(
      'runs a SCALA group through the service: its runner driver, a YARN application, reaches Temporal and the API and runs a Scala job class',
      scalaGroupOnYarn,
      420_000,
    );
  },
);

async function scalaGroupOnYarn(): Promise<void> {
  const r = await call(
    h,
    'POST',
    '/group',
    form(
      {
        name: 'yarn-scala',
        kind: 'JOB',
        language: 'SCALA',
        clusterName: 'yarn',
        scale: '1',
        executors: '1',
        driverMemory: '512m',
        executorMemory: '512m',
      },
      { jars: [{ name: 'jobs.jar', content: scalaJar }] },
    ),
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const groupId = r.body.groupId as string;
  const instance = await readyInstance(groupId);
  expect(instance.appId).toMatch(/^application_/);
  const x = await call(h, 'POST', `/group/${groupId}/job/execute`, {
    type: 'interactive_job_execute',
    jobClass: 'jobs.SumTo',
    jobConfig: { n: '100' },
  });
  expect(x.body, JSON.stringify(x.body)).toMatchObject({ jobClass: 'jobs.SumTo', result: '5050', error: null });
  expect((await call(h, 'DELETE', `/group/${groupId}`)).status).toBe(200);
  await eventually(async () => (await rmApp(instance.appId!)).state === 'KILLED', 60_000, 250);
}

/** The group's one instance once READY (a failed one ends the wait with its error). */
const readyInstance = async (groupId: string) =>
  (
    await eventually(
      async () => {
        const jobs = ((await call(h, 'GET', `/group/${groupId}`)).body.jobs ?? []) as {
          state: string;
          appId?: string;
          error?: string;
        }[];
        const failed = jobs.find((j) => j.state === 'FAILED');
        if (failed) throw Object.assign(new Error(`instance failed: ${JSON.stringify(failed)}`), { fatal: true });
        return jobs.length === 1 && jobs[0].state === 'READY' ? jobs : undefined;
      },
      240_000,
      500,
    )
  )[0];
