// Records the replay fixtures (`npm run record:replay`, or `npm run record:replay -- sqlengine connectserver` for
// some kinds only): runs today's workflow code (production's bundle) on a Temporal dev server with replaced
// activities through the paths a single job, an SQL engine and a Spark Connect server take, and writes each
// history as a History protobuf into test/integration/fixtures/ (`<kind>-history-<scenario>.pb`), where
// job-workflow-replay.test.ts and engine-workflow-replay.test.ts replay them under the code of every later
// change. Record them again only at a release (workflows/patches.ts says why and when); a change that makes one
// fail to replay needs a patch.
import {
  WithStartWorkflowOperation,
  WorkflowFailedError,
  type Workflow,
  type WorkflowHandle,
  type UpdateDefinition,
} from '@temporalio/client';
import proto from '@temporalio/proto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jobWorkflowId } from '../../domain/ids';
import { newJobRecord, singleJobDriverId, SUBMITTED_VERSION, type JobWorkflowInput } from '../../domain/job';
import { acceptedUpdate, stopJobUpdate, type singleJobWorkflow } from '../../workflows/job';
import { connectServerDriverId, connectServerId, type ConnectServerWorkflowInput } from '../../domain/connect';
import { sqlEngineDriverId, sqlEngineId, type SqlEngineWorkflowInput } from '../../domain/sql-engine';
import { engineUsedSignal, ensureEngineUpdate, stopEngineUpdate } from '../../workflows/sql-engine';
import {
  connectServerUsedSignal,
  ensureConnectServerUpdate,
  stopConnectServerUpdate,
} from '../../workflows/connect-server';
import { fakeCluster } from './fake-activities';
import { eventually, startWorkflowEnv, TASK_QUEUE, type WorkflowTestEnv } from './workflow-env';
import { sparkSpec } from '../../testkit/spark-spec';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

const spec = sparkSpec({
  name: 'etl',
  jobClass: 'main.py',
  artifacts: { jars: [], files: [], pyFiles: ['store/main.py'] },
  tags: { team: 'data' },
});

type Handle = WorkflowHandle<typeof singleJobWorkflow>;
type Cluster = ReturnType<typeof fakeCluster>;

/** Starts a job as the API does: the SUBMITTED record first, then the workflow with the submit time. */
async function submit(t: WorkflowTestEnv, cluster: Cluster, id: string, maxRetries = 0): Promise<Handle> {
  const input: JobWorkflowInput = { spec, maxRetries, submittedAt: Date.now() };
  await cluster.projectJob(newJobRecord(id, input, input.submittedAt!), SUBMITTED_VERSION);
  const h = await t.env.client.workflow.start<typeof singleJobWorkflow>('singleJobWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: jobWorkflowId(id),
    args: [input],
  });
  await h.executeUpdate(acceptedUpdate);
  return h;
}

/** Each path of a job, to its end: the name of its fixture and how it is driven. */
const JOB_SCENARIOS: Record<string, (t: WorkflowTestEnv, c: Cluster, id: string) => Promise<Handle>> = {
  // PENDING → RUNNING → SUCCEEDED: the watch writes BUSY, then FINISHED and removes the driver.
  run: async (t, c, id) => {
    const h = await submit(t, c, id);
    await eventually(() => c.launched(singleJobDriverId(id, 1)), 20_000, 'launch');
    c.set(singleJobDriverId(id, 1), 'RUNNING', { appId: 'app-1' });
    await eventually(() => c.read.job(id)?.state === 'BUSY', 20_000, 'BUSY');
    c.set(singleJobDriverId(id, 1), 'SUCCEEDED', { appId: 'app-1' });
    await h.result();
    return h;
  },
  // A failed try, then a second that finishes.
  retry: async (t, c, id) => {
    const h = await submit(t, c, id, 1);
    await eventually(() => c.launched(singleJobDriverId(id, 1)), 20_000, 'first try');
    c.set(singleJobDriverId(id, 1), 'FAILED', { message: 'exit 1' });
    await eventually(() => c.launched(singleJobDriverId(id, 2)), 20_000, 'second try');
    c.set(singleJobDriverId(id, 2), 'SUCCEEDED');
    await h.result();
    return h;
  },
  // A stop while the driver runs.
  stop: async (t, c, id) => {
    const h = await submit(t, c, id);
    await eventually(() => c.launched(singleJobDriverId(id, 1)), 20_000, 'launch');
    c.set(singleJobDriverId(id, 1), 'RUNNING');
    await eventually(() => c.read.job(id)?.state === 'BUSY', 20_000, 'BUSY');
    await h.executeUpdate(stopJobUpdate);
    await h.result();
    return h;
  },
  // A cancel while the launch is under way: CANCELED at once, the removal after the launch.
  cancel: async (t, c, id) => {
    c.slowLaunch(singleJobDriverId(id, 1), 2_000);
    const h = await submit(t, c, id);
    await eventually(() => c.read.job(id)?.state === 'STARTING', 20_000, 'STARTING');
    await h.cancel();
    await h.result().catch((e: unknown) => {
      if (!(e instanceof WorkflowFailedError)) throw e;
    });
    return h;
  },
};

/**
 * An SQL engine or a Connect server as its API service starts one (update-with-start of `ensure`), with what
 * differs between the two: the workflow type, its messages, ids and read model. Their workflows are one state
 * machine (workflows/engine-entity.ts); each kind's fixtures keep its own commands replayable.
 */
interface EngineKind {
  workflowType: string;
  ensure: UpdateDefinition<unknown, [{ force: boolean; wait: boolean }]>;
  stop: UpdateDefinition<void, [string]>;
  used: string;
  input: (clusterId: string, over: { idleStopMs?: number; startTimeoutMs?: number }) => object;
  workflowId: (clusterId: string) => string;
  driverId: (clusterId: string, generation: number, createdTime: number) => string;
  state: (c: Cluster, clusterId: string) => string | undefined;
}

/** Fixed, so a recording is the same each time but for timestamps. */
const CREATED = Date.UTC(2026, 10, 26);
const engineSpark = sparkSpec({ name: 'replay-engine' });

const ENGINE_KINDS: Record<string, EngineKind> = {
  sqlengine: {
    workflowType: 'sqlEngineWorkflow',
    ensure: ensureEngineUpdate,
    stop: stopEngineUpdate,
    used: engineUsedSignal.name,
    input: (clusterId, over): SqlEngineWorkflowInput => ({
      clusterId,
      clusterName: 'local',
      type: 'SPARK_SQL',
      spark: engineSpark,
      idleStopMs: 60_000,
      startTimeoutMs: 20_000,
      createdTime: CREATED,
      ...over,
    }),
    workflowId: (clusterId) => `sqlengine/${clusterId}/SPARK_SQL`,
    driverId: (clusterId, g, created) => sqlEngineDriverId(clusterId, 'SPARK_SQL', g, created),
    state: (c, clusterId) => c.read.sqlEngine(sqlEngineId(clusterId, 'SPARK_SQL'))?.state,
  },
  connectserver: {
    workflowType: 'connectServerWorkflow',
    ensure: ensureConnectServerUpdate,
    stop: stopConnectServerUpdate,
    used: connectServerUsedSignal.name,
    input: (clusterId, over): ConnectServerWorkflowInput => ({
      clusterId,
      clusterName: 'local',
      spark: engineSpark,
      idleStopMs: 60_000,
      startTimeoutMs: 20_000,
      createdTime: CREATED,
      ...over,
    }),
    workflowId: (clusterId) => `connectserver/${clusterId}`,
    driverId: connectServerDriverId,
    state: (c, clusterId) => c.read.connectServer(connectServerId(clusterId))?.state,
  },
};

type EngineHandle = WorkflowHandle<Workflow>;

/** Each path of an engine's (or server's) life, to its end. */
const ENGINE_SCENARIOS: Record<
  string,
  (t: WorkflowTestEnv, c: Cluster, k: EngineKind, clusterId: string) => Promise<EngineHandle>
> = {
  // STARTING → RUNNING, used once, then idle: the driver removed, the record deleted, the workflow ends.
  life: async (t, c, k, clusterId) => {
    const h = await ensureEngine(t, k, clusterId, { idleStopMs: 1_500 }, { force: false, wait: false });
    await bringUp(c, k, clusterId, 1);
    await h.signal(k.used);
    await h.result();
    return h;
  },
  // RUNNING, its driver dies: removed, the next generation launched and RUNNING; then stopped on request.
  restart: async (t, c, k, clusterId) => {
    const h = await ensureEngine(t, k, clusterId, {}, { force: false, wait: false });
    await bringUp(c, k, clusterId, 1);
    c.set(k.driverId(clusterId, 1, CREATED), 'FAILED', { message: 'java.lang.OutOfMemoryError' });
    await bringUp(c, k, clusterId, 2);
    await h.executeUpdate(k.stop, { args: ['deleted on request'] });
    await h.result();
    return h;
  },
  // Silent past the start timeout: FAILED; an ensure relaunches it; then an operator cancels the workflow.
  failed: async (t, c, k, clusterId) => {
    const h = await ensureEngine(t, k, clusterId, { startTimeoutMs: 1_000 }, { force: false, wait: true });
    await eventually(() => k.state(c, clusterId) === 'FAILED', 20_000, 'FAILED');
    await ensureEngine(t, k, clusterId, { startTimeoutMs: 1_000 }, { force: false, wait: false });
    await bringUp(c, k, clusterId, 2);
    await h.cancel();
    await h.result().catch((e: unknown) => {
      if (!(e instanceof WorkflowFailedError)) throw e;
    });
    return h;
  },
};

async function ensureEngine(
  t: WorkflowTestEnv,
  k: EngineKind,
  clusterId: string,
  over: { idleStopMs?: number; startTimeoutMs?: number },
  opts: { force: boolean; wait: boolean },
): Promise<EngineHandle> {
  const workflowId = k.workflowId(clusterId);
  await t.env.client.workflow.executeUpdateWithStart(k.ensure, {
    args: [opts],
    startWorkflowOperation: new WithStartWorkflowOperation<Workflow>(k.workflowType, {
      workflowId,
      taskQueue: TASK_QUEUE,
      args: [k.input(clusterId, over)],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  return t.env.client.workflow.getHandle(workflowId);
}

/** Waits until `generation` is launched, lets it answer and waits until the record says RUNNING. */
async function bringUp(c: Cluster, k: EngineKind, clusterId: string, generation: number): Promise<void> {
  const driverId = k.driverId(clusterId, generation, CREATED);
  await eventually(() => c.launched(driverId), 20_000, `launch of ${driverId}`);
  c.ready(driverId, { host: 'localhost', port: 10_000 + generation });
  await eventually(() => k.state(c, clusterId) === 'RUNNING', 20_000, `${driverId} RUNNING`);
}

async function write(
  kind: string,
  name: string,
  h: { fetchHistory(): Promise<proto.temporal.api.history.v1.IHistory> },
) {
  const history = await h.fetchHistory();
  const file = path.join(FIXTURES, `${kind}-history-replay-${name}.pb`);
  writeFileSync(file, proto.temporal.api.history.v1.History.encode(history).finish());
  console.log(`${path.relative(process.cwd(), file)}: ${history.events?.length ?? 0} events`);
}

async function main(): Promise<void> {
  const kinds = process.argv.slice(2);
  const wanted = (kind: string) => kinds.length === 0 || kinds.includes(kind);
  const cluster = fakeCluster({ phase: 'PENDING' });
  const t = await startWorkflowEnv(cluster.activities);
  try {
    mkdirSync(FIXTURES, { recursive: true });
    const old = (f: string) => /^(.+)-history-.+\.pb$/.exec(f)?.[1];
    for (const f of readdirSync(FIXTURES)) if (old(f) && wanted(old(f)!)) rmSync(path.join(FIXTURES, f));
    if (wanted('job'))
      for (const [name, drive] of Object.entries(JOB_SCENARIOS))
        await write('job', name, await drive(t, cluster, `replay-${name}`));
    for (const [kind, k] of Object.entries(ENGINE_KINDS)) {
      if (!wanted(kind)) continue;
      for (const [name, drive] of Object.entries(ENGINE_SCENARIOS))
        await write(kind, name, await drive(t, cluster, k, `replay-${name}`));
    }
  } finally {
    await t.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
