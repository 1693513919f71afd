// The SQL engine workflow on a real Temporal dev server with replaced activities: start and the start
// timeout, restarts of a dead engine and the crash limit, force, stop, idle stop, and continue-as-new.
// Engines are started as the API does (update-with-start of `ensure`); the test plays the engine's
// driver with cluster.ready() and cluster.set().
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  sqlEngineDriverId,
  sqlEngineId,
  sqlEngineWorkflowId,
  type SqlEngineRecord,
  type SqlEngineWorkflowInput,
} from '../../domain/sql-engine';
import {
  engineQuery,
  engineUsedSignal,
  ensureEngineUpdate,
  stopEngineUpdate,
  type sqlEngineWorkflow,
} from '../../workflows/sql-engine';
import { fakeCluster } from './fake-activities';
import { eventually, startWorkflowEnv, TASK_QUEUE, type WorkflowTestEnv } from './workflow-env';
import { sparkSpec } from '../../testkit/spark-spec';

// Launched drivers stay PENDING until the test says the engine answers (cluster.ready).
const cluster = fakeCluster({ phase: 'PENDING' });
let t: WorkflowTestEnv;

beforeAll(async () => {
  t = await startWorkflowEnv(cluster.activities);
});
afterAll(async () => t?.stop());

const spark = sparkSpec({ name: 'sql-engine-spark_sql' });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const wait = { force: false, wait: true };
const noWait = { force: false, wait: false };

let n = 0;
/** A cluster's SPARK_SQL engine, started and ensured as api/sql/engines/service.ts does. */
function engine(over: Partial<SqlEngineWorkflowInput> = {}, env = () => t) {
  const clusterId = `c${Date.now()}x${++n}`;
  // The API stamps every ensure with the time; here it stays until restarted() (a new start after a stop).
  let createdTime = Date.now();
  const input = (): SqlEngineWorkflowInput => ({
    clusterId,
    clusterName: 'local',
    type: 'SPARK_SQL',
    spark,
    idleStopMs: 60_000,
    startTimeoutMs: 20_000,
    createdTime,
    ...over,
  });
  const id = sqlEngineId(clusterId, 'SPARK_SQL');
  const workflowId = sqlEngineWorkflowId(clusterId, 'SPARK_SQL');
  const handle = () => env().env.client.workflow.getHandle<typeof sqlEngineWorkflow>(workflowId);
  return {
    id,
    handle,
    driver: (generation: number) => sqlEngineDriverId(clusterId, 'SPARK_SQL', generation, createdTime),
    restarted: () => (createdTime = Math.max(Date.now(), createdTime + 1)),
    ensure: (opts: { force: boolean; wait: boolean }): Promise<SqlEngineRecord> =>
      env().env.client.workflow.executeUpdateWithStart(ensureEngineUpdate, {
        args: [opts],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof sqlEngineWorkflow>('sqlEngineWorkflow', {
          workflowId,
          taskQueue: TASK_QUEUE,
          args: [input()],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      }),
    record: () => cluster.read.sqlEngine(id),
    /** Every launch of this engine's drivers, in order. */
    launches: () => cluster.launches.filter((l) => l.labels.sqlEngineId === id).map((l) => l.driverId),
    async runId(): Promise<{ runId: string; first?: string }> {
      const d = await handle().describe();
      return { runId: d.runId, first: d.raw.workflowExecutionInfo?.firstRunId ?? undefined };
    },
  };
}
type Engine = ReturnType<typeof engine>;

/** Waits until `generation` is launched, lets it answer and waits until the record says RUNNING. */
async function bringUp(e: Engine, generation: number, port = 10_000 + generation): Promise<void> {
  await eventually(() => cluster.launched(e.driver(generation)), 20_000, `launch of generation ${generation}`);
  cluster.ready(e.driver(generation), { host: 'engine', port });
  await eventually(
    () => e.record()?.state === 'RUNNING' && e.record()?.generation === generation,
    20_000,
    `generation ${generation} RUNNING`,
  );
}

describe('SQL engine workflow', () => {
  it('starts STARTING, is RUNNING with the endpoint once the engine answers; ensure with wait returns then', async () => {
    const e = engine();
    let settled = false;
    const ensured = e.ensure(wait).finally(() => (settled = true));
    await eventually(() => cluster.launched(e.driver(1)), 20_000, 'launch');
    expect(e.record()).toMatchObject({ state: 'STARTING', generation: 1, driverId: e.driver(1) });
    expect(cluster.launches.find((l) => l.driverId === e.driver(1))).toMatchObject({
      role: 'sql-engine',
      engine: { type: 'SPARK_SQL', stateKey: e.record()!.clusterId },
    });
    await sleep(300);
    expect(settled).toBe(false);

    cluster.ready(e.driver(1), { host: 'engine-1', port: 10001 });
    const r = await ensured;
    expect(r).toMatchObject({ id: e.id, state: 'RUNNING', generation: 1, endpoint: { host: 'engine-1', port: 10001 } });
    expect(r.startTime).toBeGreaterThan(0);
    await eventually(() => e.record()?.state === 'RUNNING', 20_000, 'RUNNING record');
    expect(e.record()).toMatchObject({ endpoint: { host: 'engine-1', port: 10001 }, driverId: e.driver(1) });
    expect(cluster.read.sqlEngineStates(e.id).filter((s, i, all) => s !== all[i - 1])).toEqual(['STARTING', 'RUNNING']);
    expect(await e.handle().query(engineQuery)).toMatchObject({ state: 'RUNNING', generation: 1 });
  });

  it('ensure without wait returns at once; a second ensure on a running engine launches nothing', async () => {
    const e = engine();
    const started = Date.now();
    expect(await e.ensure(noWait)).toMatchObject({ id: e.id, state: 'STARTING' });
    expect(Date.now() - started).toBeLessThan(10_000);
    await bringUp(e, 1);

    expect(await e.ensure(wait)).toMatchObject({ state: 'RUNNING', generation: 1 });
    expect(await e.ensure({ force: true, wait: true })).toMatchObject({ state: 'RUNNING', generation: 1 });
    await sleep(300);
    expect(e.launches()).toEqual([e.driver(1)]);
    expect(cluster.removed).not.toContain(e.driver(1));
  });

  it('an engine that does not answer within the start timeout is FAILED; a later ensure relaunches it', async () => {
    const e = engine({ startTimeoutMs: 1_500 });
    const r = await e.ensure(wait);
    expect(r).toMatchObject({ state: 'FAILED', generation: 1 });
    expect(r.error).toMatch(/did not answer within 1500 ms/);
    expect(cluster.removed).toContain(e.driver(1));
    // The answer waits for the record: a caller that reads the read model next sees what it was told.
    expect(e.record()).toMatchObject({ state: 'FAILED', generation: 1 });

    const again = e.ensure(wait);
    await bringUp(e, 2);
    expect(await again).toMatchObject({ state: 'RUNNING', generation: 2, endpoint: { port: 10002 } });
    expect(e.record()).toMatchObject({ state: 'RUNNING', generation: 2, endpoint: { port: 10002 } });
    expect(e.record()?.error).toBeUndefined();
    expect(e.launches()).toEqual([e.driver(1), e.driver(2)]);
  });

  it('a driver that ends before it answers fails the launch with the reason', async () => {
    const e = engine();
    const ensured = e.ensure(wait);
    await eventually(() => cluster.launched(e.driver(1)), 20_000, 'launch');
    cluster.set(e.driver(1), 'FAILED', { message: 'exit 1' });
    expect(await ensured).toMatchObject({ state: 'FAILED', error: expect.stringMatching(/ended before it listened/) });
    expect(cluster.removed).toContain(e.driver(1));
  });

  it('restarts a RUNNING engine whose driver died as the next generation, removing the dead driver', async () => {
    const e = engine();
    await e.ensure(noWait);
    await bringUp(e, 1);
    cluster.set(e.driver(1), 'FAILED', { message: 'java.lang.OutOfMemoryError' });
    await eventually(() => e.record()?.generation === 2, 20_000, 'generation 2');
    expect(e.record()).toMatchObject({ state: 'STARTING', driverId: e.driver(2) });
    expect(e.record()?.endpoint).toBeUndefined();
    expect(e.record()?.error).toMatch(/driver ended \(FAILED: java.lang.OutOfMemoryError\); restarted/);
    expect(cluster.removed).toContain(e.driver(1));

    await bringUp(e, 2);
    expect(e.record()).toMatchObject({ endpoint: { port: 10002 }, driverId: e.driver(2) });
    expect(e.record()?.error).toBeUndefined();
  });

  it('an engine that dies three times within the window is FAILED and not restarted again', async () => {
    const e = engine();
    await e.ensure(noWait);
    for (const g of [1, 2, 3]) {
      await bringUp(e, g);
      cluster.set(e.driver(g), 'MISSING');
    }
    await eventually(() => e.record()?.state === 'FAILED', 20_000, 'FAILED');
    expect(e.record()?.error).toMatch(/died 3 times within 5 minutes/);
    expect(cluster.removed).toEqual(expect.arrayContaining([e.driver(1), e.driver(2), e.driver(3)]));
    await sleep(500);
    expect(e.launches()).toEqual([e.driver(1), e.driver(2), e.driver(3)]);
    // ensure is how it starts again, with a clean count.
    const again = e.ensure(wait);
    await bringUp(e, 4);
    expect(await again).toMatchObject({ state: 'RUNNING', generation: 4 });
  });

  it('force replaces a STARTING engine: the starting driver goes and the next generation is launched', async () => {
    const e = engine();
    await e.ensure(noWait);
    await eventually(() => cluster.launched(e.driver(1)), 20_000, 'launch');
    const forced = e.ensure({ force: true, wait: true });
    await eventually(() => cluster.launched(e.driver(2)), 20_000, 'generation 2');
    expect(cluster.removed).toContain(e.driver(1));
    expect(cluster.alive(e.driver(1))).toBe(false);
    cluster.ready(e.driver(2));
    expect(await forced).toMatchObject({ state: 'RUNNING', generation: 2 });
  });

  it('force while the launch itself is under way leaves no driver of the replaced generation behind', async () => {
    const e = engine();
    cluster.slowLaunch(e.driver(1), 1_500);
    await e.ensure(noWait);
    await eventually(() => e.record()?.driverId === e.driver(1), 20_000, 'generation 1 STARTING');
    // Its record is written before its launch begins: wait for the launch (a force before it launches nothing).
    await eventually(() => cluster.launchBegun(e.driver(1)), 20_000, 'generation 1 launch under way');
    const forced = e.ensure({ force: true, wait: true });
    await eventually(() => cluster.launched(e.driver(2)), 20_000, 'generation 2');
    // The slow launch of generation 1 has come back by now; it must not have left a driver running.
    await eventually(() => cluster.launched(e.driver(1)), 20_000, 'generation 1 launch returned');
    await sleep(300);
    expect(cluster.alive(e.driver(1))).toBe(false);
    cluster.ready(e.driver(2));
    expect(await forced).toMatchObject({ state: 'RUNNING', generation: 2 });
  });

  it('stop removes the driver, deletes the record and ends the workflow', async () => {
    const e = engine();
    await e.ensure(noWait);
    await bringUp(e, 1);
    await e.handle().executeUpdate(stopEngineUpdate, { args: ['deleted on request'] });
    expect(cluster.removed).toContain(e.driver(1));
    expect(e.record()).toBeUndefined();
    await e.handle().result();
    expect((await e.handle().describe()).status.name).toBe('COMPLETED');
  });

  it('stop while STARTING cancels the launch; a waiting ensure sees the engine stopped', async () => {
    const e = engine();
    const ensured = e.ensure(wait);
    ensured.catch(() => undefined);
    await eventually(() => cluster.launched(e.driver(1)), 20_000, 'launch');
    await e.handle().executeUpdate(stopEngineUpdate, { args: ['deleted on request'] });
    const err = await ensured.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((err as WorkflowUpdateFailedError).cause?.message)).toMatch(/was stopped: deleted on request/);
    expect(cluster.removed).toContain(e.driver(1));
    expect(e.record()).toBeUndefined();
    await e.handle().result();
  });

  it('ensure while stopping is rejected; once stopped, ensure starts a new engine', async () => {
    const e = engine();
    await e.ensure(noWait);
    await bringUp(e, 1);
    cluster.slowRemove(e.driver(1), 1_500);
    const stopping = await e.handle().startUpdate(stopEngineUpdate, {
      args: ['its cluster was deleted'],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    const err = await e.ensure(wait).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((err as WorkflowUpdateFailedError).cause?.message)).toMatch(/stopping \(its cluster was deleted\)/);
    await stopping.result();
    expect(e.record()).toBeUndefined();

    // Generations count from 1 again, under a driver id of their own: adapters keep a removed id taken.
    const stopped = e.driver(1);
    e.restarted();
    const again = e.ensure(wait);
    await eventually(() => cluster.launched(e.driver(1)), 20_000, 'a new launch');
    expect(e.driver(1)).not.toBe(stopped);
    expect(e.launches()).toEqual([stopped, e.driver(1)]);
    cluster.ready(e.driver(1));
    expect(await again).toMatchObject({ state: 'RUNNING', generation: 1, driverId: e.driver(1) });
    await eventually(() => e.record()?.state === 'RUNNING', 20_000, 'a new RUNNING record');
  });

  it('stops itself when idle past idleStopMs', async () => {
    const e = engine({ idleStopMs: 2_000 });
    await e.ensure(noWait);
    await bringUp(e, 1);
    const running = Date.now();
    await e.handle().result();
    expect(Date.now() - running).toBeGreaterThan(1_000);
    expect(Date.now() - running).toBeLessThan(15_000);
    expect(cluster.removed).toContain(e.driver(1));
    expect(e.record()).toBeUndefined();
  });

  it('the idle clock starts when the engine runs, not when it was asked for', async () => {
    const e = engine({ idleStopMs: 2_000 });
    await e.ensure(noWait);
    await eventually(() => cluster.launched(e.driver(1)), 20_000, 'launch');
    // Starting takes longer than the idle time: the engine must still be there to be used.
    await sleep(2_500);
    await bringUp(e, 1);
    await sleep(1_000);
    expect(e.record()).toMatchObject({ state: 'RUNNING' });
    expect(cluster.removed).not.toContain(e.driver(1));
  });

  it('used signals keep an engine alive past idleStopMs; it stops once they cease', async () => {
    const e = engine({ idleStopMs: 2_000 });
    await e.ensure(noWait);
    await bringUp(e, 1);
    for (let i = 0; i < 10; i++) {
      await e.handle().signal(engineUsedSignal);
      await sleep(500);
    }
    expect(e.record()).toMatchObject({ state: 'RUNNING', generation: 1 });
    expect(cluster.removed).not.toContain(e.driver(1));
    const lastUse = Date.now();
    await e.handle().result();
    expect(Date.now() - lastUse).toBeGreaterThan(1_000);
    expect(e.record()).toBeUndefined();
  });

  it('cancelled by an operator, it removes the driver and the record', async () => {
    const e = engine();
    await e.ensure(noWait);
    await bringUp(e, 1);
    await e.handle().cancel();
    await expect(e.handle().result()).rejects.toThrow();
    expect(cluster.removed).toContain(e.driver(1));
    expect(e.record()).toBeUndefined();
  });
});

describe('SQL engine workflow continuing as new', () => {
  let can: WorkflowTestEnv;
  beforeAll(async () => {
    can = await startWorkflowEnv(cluster.activities, { suggestContinueAsNewAfter: 60 });
  });
  afterAll(async () => can?.stop());

  it('keeps the record and the running engine, and the new run watches it', async () => {
    const e = engine({}, () => can);
    await e.ensure(noWait);
    await bringUp(e, 1);
    const before = await e.runId();
    // Each signal, given time to get a workflow task of its own, adds a few events to the history.
    for (let i = 0; i < 60 && (await e.runId()).runId === before.runId; i++) {
      await e.handle().signal(engineUsedSignal);
      await sleep(100);
    }
    const after = await e.runId();
    expect(after.runId).not.toBe(before.runId);
    expect(after.first).toBe(before.first ?? before.runId);

    expect(await e.handle().query(engineQuery)).toMatchObject({
      state: 'RUNNING',
      generation: 1,
      driverId: e.driver(1),
    });
    expect(e.record()).toMatchObject({ state: 'RUNNING', generation: 1, endpoint: { port: 10001 } });
    expect(e.launches()).toEqual([e.driver(1)]);
    expect(cluster.removed).not.toContain(e.driver(1));
    expect(cluster.read.sqlEngineWrites(e.id).every((r) => r.generation <= 1)).toBe(true);

    // The new run watches the driver it took over, and writes above the old run's versions.
    cluster.set(e.driver(1), 'FAILED', { message: 'lost' });
    await bringUp(e, 2);
    expect(e.launches()).toEqual([e.driver(1), e.driver(2)]);
  });
});
