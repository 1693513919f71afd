// The Spark Connect server workflow on a real Temporal dev server with replaced activities: what is its own
// beside the state machine it shares with SQL engines (workflows/engine-entity.ts, whose transitions
// sql-engine-workflow.test.ts goes through): its driver's role and labels, its record, a stop streamed as a
// STOPPED record with the reason before the record goes, and its words for an idle stop and a dead driver.
// Servers are started as the gateway does (update-with-start of `ensure`).
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectServerDriverId,
  connectServerId,
  connectServerWorkflowId,
  type ConnectServerRecord,
  type ConnectServerWorkflowInput,
} from '../../domain/connect';
import {
  connectServerQuery,
  connectServerUsedSignal,
  ensureConnectServerUpdate,
  stopConnectServerUpdate,
  type connectServerWorkflow,
} from '../../workflows/connect-server';
import { fakeCluster } from './fake-activities';
import { eventually, startWorkflowEnv, TASK_QUEUE, type WorkflowTestEnv } from './workflow-env';
import { sparkSpec } from '../../testkit/spark-spec';

// Launched drivers stay PENDING until the test says the server answers (cluster.ready).
const cluster = fakeCluster({ phase: 'PENDING' });
let t: WorkflowTestEnv;

beforeAll(async () => {
  t = await startWorkflowEnv(cluster.activities);
});
afterAll(async () => t?.stop());

const spark = sparkSpec({ name: 'spark-connect' });
let n = 0;

/** A cluster's Connect server, started and ensured as api/connect/service.ts does. */
function server(over: Partial<ConnectServerWorkflowInput> = {}) {
  const clusterId = `c${Date.now()}x${++n}`;
  const createdTime = Date.now();
  const input: ConnectServerWorkflowInput = {
    clusterId,
    clusterName: 'local',
    spark,
    idleStopMs: 60_000,
    startTimeoutMs: 20_000,
    createdTime,
    ...over,
  };
  const id = connectServerId(clusterId);
  const workflowId = connectServerWorkflowId(clusterId);
  const handle = () => t.env.client.workflow.getHandle<typeof connectServerWorkflow>(workflowId);
  const driver = (generation: number) => connectServerDriverId(clusterId, generation, createdTime);
  return {
    id,
    handle,
    driver,
    ensure: (opts: { force: boolean; wait: boolean }): Promise<ConnectServerRecord> =>
      t.env.client.workflow.executeUpdateWithStart(ensureConnectServerUpdate, {
        args: [opts],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof connectServerWorkflow>('connectServerWorkflow', {
          workflowId,
          taskQueue: TASK_QUEUE,
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      }),
    record: () => cluster.read.connectServer(id),
    writes: () => cluster.read.connectServerWrites(id),
    /** Lets `generation` answer once launched and waits until the record says RUNNING. */
    async bringUp(generation: number): Promise<void> {
      await eventually(() => cluster.launched(driver(generation)), 20_000, `launch of generation ${generation}`);
      cluster.ready(driver(generation), { host: '127.0.0.1', port: 15_000 + generation });
      await eventually(
        () => this.record()?.state === 'RUNNING' && this.record()?.generation === generation,
        20_000,
        `generation ${generation} RUNNING`,
      );
    },
  };
}

describe('Spark Connect server workflow', () => {
  it('launches a connect-server driver and is RUNNING at its endpoint once it answers', async () => {
    const s = server();
    const ensured = s.ensure({ force: false, wait: true });
    await s.bringUp(1);
    expect(await ensured).toMatchObject({ id: s.id, state: 'RUNNING', generation: 1, endpoint: { port: 15_001 } });
    const launch = cluster.launches.find((l) => l.driverId === s.driver(1));
    expect(launch).toMatchObject({ role: 'connect-server', labels: { connectServerId: s.id } });
    expect(launch?.engine).toBeUndefined();
    expect(cluster.read.connectServerStates(s.id).filter((st, i, all) => st !== all[i - 1])).toEqual([
      'STARTING',
      'RUNNING',
    ]);
    expect(await s.handle().query(connectServerQuery)).toMatchObject({ state: 'RUNNING', driverId: s.driver(1) });
    await s.handle().executeUpdate(stopConnectServerUpdate, { args: ['test over'] });
  });

  it('a stop writes STOPPED with the reason before the record goes; ensure meanwhile is refused', async () => {
    const s = server();
    await s.ensure({ force: false, wait: false });
    await s.bringUp(1);
    cluster.slowRemove(s.driver(1), 1_500);
    const stopping = await s.handle().startUpdate(stopConnectServerUpdate, {
      args: ['its cluster was deleted'],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    const refused = await s.ensure({ force: false, wait: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((refused as WorkflowUpdateFailedError).cause?.message)).toBe(
      'the Spark Connect server is stopping (its cluster was deleted); try again',
    );
    await stopping.result();
    expect(cluster.removed).toContain(s.driver(1));
    expect(s.writes().at(-1)).toMatchObject({ state: 'STOPPED', error: 'its cluster was deleted' });
    expect(s.writes().at(-1)?.endpoint).toBeUndefined();
    expect(s.record()).toBeUndefined();
    await s.handle().result();
  });

  it('restarts a dead server as the next generation, saying why; idle, it stops with no session', async () => {
    const s = server({ idleStopMs: 2_000 });
    await s.ensure({ force: false, wait: false });
    await s.bringUp(1);
    cluster.set(s.driver(1), 'FAILED', { message: 'lost' });
    await eventually(() => s.record()?.generation === 2, 20_000, 'generation 2');
    expect(s.record()?.error).toBe("the Spark Connect server's driver ended (FAILED: lost); restarted");
    expect(cluster.removed).toContain(s.driver(1));
    await s.bringUp(2);
    await s.handle().signal(connectServerUsedSignal);
    await s.handle().result();
    expect(s.writes().at(-1)).toMatchObject({ state: 'STOPPED', error: 'no session for 2 s (CONNECT_IDLE_MS)' });
    expect(cluster.removed).toContain(s.driver(2));
    expect(s.record()).toBeUndefined();
  });
});
