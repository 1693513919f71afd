// The cluster adapter contract (domain/driver.ts), one suite for every adapter: a test file names the adapter
// and how to build its specs, and gets the same cases. The drivers of a case run side by side, so a cluster's
// start-up cost is paid once. Cases: launch is idempotent (a second launch finds the first driver); watch
// reaches SUCCEEDED with exit code 0, and FAILED with a non-zero exit code and a reason; the logs outlive the
// driver and page (`from`, `size`); remove stops a running driver, and is idempotent, also for a driver that
// never existed; a broken cluster answers with a reason (FAILED or UNKNOWN with a message, or a launch error).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { isFinalPhase, type ClusterAdapter, type DriverSpec, type DriverStatus } from '../domain/driver';
import { sparkSpec } from './spark-spec';
import { eventually } from './wait';

export type ContractKind = 'ok' | 'fail' | 'long';

/** PySpark programs of each kind: `ok` prints three marked lines, `fail` exits 3, `long` sleeps. */
const PROGRAMS: Record<ContractKind, string> = {
  ok: 'from pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()\nn = spark.range(5).count()\nfor i in range(3):\n    print(f"CONTRACT-OK {i} {n}", flush=True)\nspark.stop()\n',
  fail: 'import sys\nfrom pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()\nprint("CONTRACT-FAIL", flush=True)\nspark.stop()\nsys.exit(3)\n',
  long: 'import time\nfrom pyspark.sql import SparkSession\nspark = SparkSession.builder.getOrCreate()\nprint("CONTRACT-LONG", flush=True)\ntime.sleep(600)\n',
};

/** A single job's DriverSpec running the program of `kind`, its main file written under `dir`. */
export function contractSpec(
  dir: string,
  driverId: string,
  kind: ContractKind,
  clusterName: string,
  memory = { executors: 1, driverMemory: '512m', executorMemory: '512m' },
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
      memorySettings: { dynamicAllocation: false, ...memory },
      artifacts: { jars: [], files: [], pyFiles: [main] },
    }),
  };
}

export interface ContractTarget {
  adapter: ClusterAdapter;
  /** The spec of a driver of this kind on the adapter's cluster. */
  spec(driverId: string, kind: ContractKind): DriverSpec;
  /** An adapter of a cluster that cannot work (not reachable, no Spark). */
  broken: ClusterAdapter;
  /** How long a driver may take to end. */
  timeoutMs: number;
}

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
  it('launch is idempotent; SUCCEEDED with exit 0 and FAILED with an exit code and a reason; logs after the end, paged; remove stops a running driver and is idempotent', async () => {
    const t = target();
    const a = t.adapter;
    const [ok, fail, long] = (['ok', 'fail', 'long'] as const).map((k) => t.spec(`${prefix}-${k}-1`, k));
    await Promise.all([a.launch(ok), a.launch(fail), a.launch(long)]);
    // A second launch of a driver finds it.
    const again: DriverStatus = await a.launch(ok);
    expect(['PENDING', 'RUNNING', 'SUCCEEDED']).toContain(again.phase);

    const running = await eventually(
      async () => {
        const s = await a.status(long.driverId);
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

    // Remove: a running driver stops; again, and a driver that never was, are no errors.
    await a.remove(long.driverId);
    await eventually(async () => (await a.status(long.driverId)).phase !== 'RUNNING', 60_000, 500);
    await a.remove(long.driverId);
    await a.remove(`${prefix}-never-1`);
    expect((await a.status(`${prefix}-never-1`)).phase).toBe('MISSING');
    await Promise.all([a.remove(ok.driverId), a.remove(fail.driverId)]);
  }, 420_000);

  it('a broken cluster answers with a reason', async () => {
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
  }, 120_000);
}
