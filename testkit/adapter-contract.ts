// The cluster adapter contract (domain/driver.ts), one suite for every adapter: a test file names the adapter
// and how to build its specs, and gets the same cases, which run side by side (a cluster's start-up and its
// drivers' waits are paid once). Cases:
// - single jobs (their drivers side by side): launch is idempotent (a second launch finds the first driver);
//   watch reaches SUCCEEDED with exit code 0, and FAILED with a non-zero exit code and a reason; the logs
//   outlive the driver and page (`from`, `size`); remove stops a running driver, and is idempotent, also for a
//   driver that never existed;
// - a group's runner: its driver (runner/runner.py, the spec the group workflow builds, with the Temporal address
//   launchDriver adds) registers as the service sees a READY instance (the `instanceReady` signal to the group's
//   workflow, here a stand-in no worker serves, so the signals stay in its history), executes code over its
//   direct channel with the secret the adapter handed it, and is gone after remove (its channel refuses);
// - an SQL engine: the SPARK_SQL engine (Thrift Server) is RUNNING with an endpoint, a second launch finds it,
//   the endpoint answers a statement, and after remove the engine is no longer RUNNING and nothing answers;
// - a broken cluster answers with a reason (FAILED or UNKNOWN with a message, or a launch error).
// A test file adds its cluster type's own checks through `checks` (a YARN application, a process group).
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { expect, it } from 'vitest';
import { tcpAccepts } from '../activities/adapters/engine-probe';
import { isFinalPhase, type ClusterAdapter, type DriverSpec, type DriverStatus } from '../domain/driver';
import type { RunnerResponse } from '../domain/group';
import { runnerDriverSpec } from '../domain/group-instances';
import { groupWorkflowId } from '../domain/ids';
import { sqlEngineDriverId, type EngineEndpoint } from '../domain/sql-engine';
import type { Group } from '../domain/types';
import { DIRECT_SECRET_HEADER, directSecret } from '../lib/driver-secret';
import { protocols } from '../lib/sql';
import { TEST_JVM_OPTIONS } from './jvm-options';
import { sparkSpec } from './spark-spec';
import { eventually } from './wait';

export type ContractKind = 'ok' | 'fail' | 'long';

export { TEST_JVM_OPTIONS };
/** TEST_JVM_OPTIONS as Spark properties (`spark.yarn.am.*`: YARN's application master in client mode). */
export const TEST_JVM_CONF: Record<string, string> = {
  'spark.driver.extraJavaOptions': TEST_JVM_OPTIONS,
  'spark.executor.extraJavaOptions': TEST_JVM_OPTIONS,
  'spark.yarn.am.extraJavaOptions': TEST_JVM_OPTIONS,
};

/** PySpark programs of each kind: `ok` prints three marked lines, `fail` exits 3, `long` sleeps. */
const PROGRAMS: Record<ContractKind, string> = {
  ok: 'from pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()\nn = spark.range(5).count()\nfor i in range(3):\n    print(f"CONTRACT-OK {i} {n}", flush=True)\nspark.stop()\n',
  fail: 'import sys\nfrom pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()\nprint("CONTRACT-FAIL", flush=True)\nspark.stop()\nsys.exit(3)\n',
  long: 'import time\nfrom pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()\nprint("CONTRACT-LONG", flush=True)\ntime.sleep(600)\n',
};

/**
 * A single job's DriverSpec running the program of `kind`, its main file written under `dir`. `memory`: one
 * executor by default (only `ok` runs a Spark job; a cluster whose Spark takes none may save the others').
 */
export function contractSpec(
  dir: string,
  driverId: string,
  kind: ContractKind,
  clusterName: string,
  memory = { executors: 1, driverMemory: '512m', executorMemory: '512m' },
  jobConfig: Record<string, string> = {},
): DriverSpec {
  mkdirSync(dir, { recursive: true });
  const main = path.join(dir, `contract_${kind}.py`);
  writeFileSync(main, PROGRAMS[kind]);
  return {
    driverId,
    role: 'application',
    env: {},
    labels: { jobId: driverId },
    spark: sparkSpec({
      name: driverId,
      clusterName,
      jobClass: `contract_${kind}`,
      jobConfig,
      memorySettings: { dynamicAllocation: false, ...memory },
      artifacts: { jars: [], files: [], pyFiles: [main] },
    }),
  };
}

/** What a runner sends the group's workflow once it takes executions (runner/spark_runner/main.py). */
export interface RunnerReady {
  instanceId: string;
  appId?: string;
  /** host:port of its direct execute channel. */
  endpoint?: string;
}

export interface ContractTarget {
  adapter: ClusterAdapter;
  /** The spec of a driver of this kind on the adapter's cluster. */
  spec(driverId: string, kind: ContractKind): DriverSpec;
  /** An adapter of a cluster that cannot work (not reachable, no Spark). */
  broken: ClusterAdapter;
  /** How long a driver may take to end. */
  timeoutMs: number;
  /** The cluster's name in specs. */
  clusterName: string;
  /** Spark properties of the runner's and the engine's specs (a job's are its `spec`'s). */
  sparkConf?: Record<string, string>;
  /** The Temporal server runners connect to (launchDriver puts it in a runner's environment). */
  temporal: { address: string; namespace: string };
  /** The SECRET_KEY the adapter derives a runner's direct channel secret from. */
  secretKey: string;
  /** Where this test reaches an engine's endpoint (e.g. a Service's name as its pod's IP); default as it is. */
  reach?(endpoint: EngineEndpoint, driverId: string): Promise<EngineEndpoint>;
  /** The cluster type's own checks, run inside the shared cases. */
  checks?: {
    /** The `ok` driver after it ended and its logs were read. */
    jobEnded?(driverId: string, status: DriverStatus): Promise<void>;
    /** The `long` driver after remove stopped it (`running`: its status while it ran). */
    jobRemoved?(driverId: string, running: DriverStatus): Promise<void>;
    runnerReady?(driverId: string, ready: RunnerReady): Promise<void>;
    runnerRemoved?(driverId: string, ready: RunnerReady): Promise<void>;
    engineRunning?(driverId: string, status: DriverStatus): Promise<void>;
    engineRemoved?(driverId: string, running: DriverStatus): Promise<void>;
  };
}

/** Memory of the runner's and the engine's Spark: one small executor. */
const SMALL = { dynamicAllocation: false, executors: 1, driverMemory: '512m', executorMemory: '512m' };

const final = (a: ClusterAdapter, id: string, timeoutMs: number) =>
  eventually(
    async () => {
      const s = await a.status(id);
      return isFinalPhase(s.phase) ? s : undefined;
    },
    timeoutMs,
    500,
  );

/** Registers the contract's cases (call inside a describe; `target` is read when the cases run). */
export function adapterContract(target: () => ContractTarget, prefix: string): void {
  it.concurrent(
    'launch is idempotent; SUCCEEDED with exit 0 and FAILED with an exit code and a reason; logs after the end, paged; remove stops a running driver and is idempotent',
    async () => {
      const t = target();
      const a = t.adapter;
      const [ok, fail, long] = (['ok', 'fail', 'long'] as const).map((k) => t.spec(`${prefix}-${k}-1`, k));
      await Promise.all([a.launch(ok), a.launch(fail), a.launch(long)]);
      // A second launch of a driver finds it.
      const again: DriverStatus = await a.launch(ok);
      expect(['PENDING', 'RUNNING', 'SUCCEEDED']).toContain(again.phase);

      const running = await eventually(
        async () => {
          const s = await notRunning(a, long.driverId, 'the long driver');
          return s.phase === 'RUNNING' ? s : undefined;
        },
        t.timeoutMs,
        500,
      );
      expect(running.phase).toBe('RUNNING');

      const [done, failed] = await Promise.all([
        final(a, ok.driverId, t.timeoutMs),
        final(a, fail.driverId, t.timeoutMs),
      ]);
      expect(done).toMatchObject({ phase: 'SUCCEEDED', exitCode: 0 });
      expect(failed.phase).toBe('FAILED');
      expect(failed.exitCode).toBeDefined();
      expect(failed.exitCode).not.toBe(0);
      expect(failed.message).toBeTruthy();
      // Relaunching an ended driver finds it ended (no second run).
      const ended = await a.launch(ok);
      expect(ended.phase).toBe('SUCCEEDED');
      expect(ended.appId).toBe(done.appId);

      // Logs after the driver ended, and paging.
      const logs = await a.logs(ok.driverId, { from: 0, size: 5000 });
      const withMarks = logs.find((l) => l.log.some((x) => x.includes('CONTRACT-OK 0')));
      expect(withMarks, JSON.stringify(logs.map((l) => [l.fileName, l.log.length]))).toBeDefined();
      const at = withMarks!.log.findIndex((x) => x.includes('CONTRACT-OK 1'));
      const page = await a.logs(ok.driverId, { from: at, size: 1 });
      expect(page.find((l) => l.fileName === withMarks!.fileName)?.log).toEqual([withMarks!.log[at]]);
      await t.checks?.jobEnded?.(ok.driverId, done);

      // Remove: a running driver stops; again, and a driver that never was, are no errors.
      await a.remove(long.driverId);
      await eventually(async () => (await a.status(long.driverId)).phase !== 'RUNNING', 60_000, 500);
      await a.remove(long.driverId);
      await t.checks?.jobRemoved?.(long.driverId, running);
      await a.remove(`${prefix}-never-1`);
      expect((await a.status(`${prefix}-never-1`)).phase).toBe('MISSING');
      await Promise.all([a.remove(ok.driverId), a.remove(fail.driverId)]);
    },
    420_000,
  );

  it.concurrent(
    'a broken cluster answers with a reason',
    async () => {
      const t = target();
      const spec = t.spec(`${prefix}-broken-1`, 'ok');
      let reason: string | undefined;
      try {
        const first = await t.broken.launch(spec);
        const s = await eventually(
          async () => {
            const x = await t.broken.status(spec.driverId);
            return isFinalPhase(x.phase) || x.phase === 'UNKNOWN' ? x : undefined;
          },
          60_000,
          500,
        ).catch(() => first);
        expect(['FAILED', 'UNKNOWN']).toContain(s.phase);
        reason = s.message;
      } catch (e) {
        reason = (e as Error).message;
      }
      expect(reason).toBeTruthy();
      await t.broken.remove(spec.driverId).catch(() => undefined);
    },
    120_000,
  );

  it.concurrent(
    "a group's runner registers READY with its direct channel, executes code there, and is gone after remove",
    async () => runnerCase(target(), prefix),
    420_000,
  );

  it.concurrent(
    'the SPARK_SQL engine answers a statement at its endpoint, a second launch finds it, and it is gone after remove',
    async () => engineCase(target(), prefix),
    420_000,
  );
}

/** The signals the group's workflow received, by name, oldest first. */
async function signals(client: Client, workflowId: string, name: string): Promise<unknown[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.workflowExecutionSignaledEventAttributes)
    .filter((a) => a?.signalName === name)
    .map((a) => defaultPayloadConverter.fromPayload(a!.input!.payloads![0]));
}

/** POST /execute on a runner's direct channel, as api/groups/direct.ts does; the HTTP status and the body. */
async function directExecute(
  endpoint: string,
  secret: string,
  body: unknown,
): Promise<{ status: number; body: RunnerResponse | string }> {
  const r = await fetch(`http://${endpoint}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [DIRECT_SECRET_HEADER]: secret },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await r.text();
  return { status: r.status, body: r.status === 200 ? (JSON.parse(text) as RunnerResponse) : text };
}

/** The driver's status; one that ended ends the wait at once (`fatal`), with its status. */
const notRunning = async (a: ClusterAdapter, id: string, what: string) => {
  const s = await a.status(id);
  if (isFinalPhase(s.phase)) throw Object.assign(new Error(`${what} ended: ${JSON.stringify(s)}`), { fatal: true });
  return s;
};

async function runnerCase(t: ContractTarget, prefix: string): Promise<void> {
  const a = t.adapter;
  const connection = await Connection.connect({ address: t.temporal.address });
  const client = new Client({ connection, namespace: t.temporal.namespace });
  // The group's workflow: a stand-in of a type no worker serves, on a queue nobody polls, so the runner's
  // signals stay in its history for the test to read.
  const groupId = `${prefix}-${randomUUID().slice(0, 8)}`;
  const workflowId = groupWorkflowId(groupId);
  const standIn = await client.workflow.start('adapterContractGroup', {
    workflowId,
    taskQueue: `${prefix}-nobody`,
    workflowExecutionTimeout: '30 minutes',
  });
  const jobId = `${groupId}-1`;
  const group = { id: groupId, name: `${prefix}-group`, kind: 'CODE', language: 'PYTHON' } as Omit<Group, 'jobs'>;
  const base = runnerDriverSpec(
    group,
    sparkSpec({ clusterName: t.clusterName, memorySettings: SMALL, jobConfig: { ...t.sparkConf } }),
    jobId,
  );
  // What launchDriver adds: the Temporal server the worker uses.
  const spec: DriverSpec = {
    ...base,
    env: { TEMPORAL_ADDRESS: t.temporal.address, TEMPORAL_NAMESPACE: t.temporal.namespace, ...base.env },
  };
  try {
    await a.launch(spec);
    const ready = await eventually(
      async () => {
        await notRunning(a, spec.driverId, 'the runner');
        return (await signals(client, workflowId, 'instanceReady'))[0] as RunnerReady | undefined;
      },
      t.timeoutMs,
      500,
    );
    expect(ready).toMatchObject({ instanceId: jobId, endpoint: expect.stringMatching(/:\d+$/) });
    const status = await a.status(spec.driverId);
    expect(status.phase).toBe('RUNNING');
    if (status.appId) expect(ready.appId).toBe(status.appId);
    await t.checks?.runnerReady?.(spec.driverId, ready);

    const request = {
      jobInstanceId: `${jobId}-x1`,
      groupId,
      type: 'interactive_code_execute',
      code: 'spark.range(10).count() * 2',
      jobConfig: {},
    };
    // The channel checks its caller: only the secret of this driver opens it.
    expect(
      (await directExecute(ready.endpoint!, directSecret(t.secretKey, `${spec.driverId}-other`), request)).status,
    ).toBe(401);
    const x = await directExecute(ready.endpoint!, directSecret(t.secretKey, spec.driverId), request);
    expect(x.body, JSON.stringify(x.body)).toMatchObject({ result: '20', error: null, instanceId: jobId });

    await a.remove(spec.driverId);
    const [host, port] = [ready.endpoint!.slice(0, ready.endpoint!.lastIndexOf(':')), ready.endpoint!.split(':').pop()];
    await eventually(
      async () =>
        !(await tcpAccepts({ host, port: Number(port) }, 2_000)) && isFinalOrGone(await a.status(spec.driverId)),
      120_000,
      500,
    );
    await a.remove(spec.driverId);
    await t.checks?.runnerRemoved?.(spec.driverId, ready);
  } finally {
    await a.remove(spec.driverId).catch(() => undefined);
    await standIn.terminate('contract case done').catch(() => undefined);
    await connection.close();
  }
}

const isFinalOrGone = (s: DriverStatus) => isFinalPhase(s.phase) || s.phase === 'MISSING';

async function engineCase(t: ContractTarget, prefix: string): Promise<void> {
  const a = t.adapter;
  const driverId = sqlEngineDriverId(prefix, 'SPARK_SQL', 1, Date.now());
  const spec: DriverSpec = {
    driverId,
    role: 'sql-engine',
    engine: { type: 'SPARK_SQL', stateKey: prefix },
    env: {},
    labels: { clusterId: prefix },
    spark: sparkSpec({
      name: `${prefix} SPARK_SQL`,
      language: 'SCALA',
      clusterName: t.clusterName,
      memorySettings: SMALL,
      jobConfig: { ...t.sparkConf },
    }),
  };
  try {
    await a.launch(spec);
    const running = await eventually(
      async () => {
        const s = await notRunning(a, driverId, 'the engine');
        return s.phase === 'RUNNING' && s.endpoint ? s : undefined;
      },
      t.timeoutMs,
      500,
    );
    // A second launch finds it: the same endpoint.
    expect((await a.launch(spec)).endpoint).toEqual(running.endpoint);
    const at = t.reach ? await t.reach(running.endpoint!, driverId) : running.endpoint!;
    const outcome = await eventually(
      async () => {
        await notRunning(a, driverId, 'the engine');
        const conn = await protocols.SPARK_SQL.connect(at, { user: 'contract', connectTimeoutMs: 5_000 });
        try {
          return await conn.run('select sum(id) as total from range(1, 101)', { maxRows: 10, timeoutMs: 120_000 });
        } finally {
          await conn.close().catch(() => undefined);
        }
      },
      t.timeoutMs,
      1_000,
    );
    expect(outcome.info.state, JSON.stringify(outcome.info)).toBe('FINISHED');
    expect(outcome.rows).toEqual([[5050]]);
    await t.checks?.engineRunning?.(driverId, running);

    await a.remove(driverId);
    await eventually(
      async () => !(await tcpAccepts(at, 2_000)) && isFinalOrGone(await a.status(driverId)),
      120_000,
      500,
    );
    expect((await a.status(driverId)).endpoint).toBeUndefined();
    await a.remove(driverId);
    await t.checks?.engineRemoved?.(driverId, running);
  } finally {
    await a.remove(driverId).catch(() => undefined);
  }
}
