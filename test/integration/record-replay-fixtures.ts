// Records the replay fixtures of the single job workflow (`npm run record:replay`): runs today's workflow
// code (production's bundle) on a Temporal dev server with replaced activities through the paths a job takes,
// and writes each history as a History protobuf into test/integration/fixtures/, where
// job-workflow-replay.test.ts replays them under the code of every later change. Record them again only at a
// release (workflows/patches.ts says why and when); a change that makes one fail to replay needs a patch.
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jobWorkflowId } from '../../domain/ids';
import { newJobRecord, singleJobDriverId, SUBMITTED_VERSION, type JobWorkflowInput } from '../../domain/job';
import { acceptedUpdate, stopJobUpdate, type singleJobWorkflow } from '../../workflows/job';
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
const SCENARIOS: Record<string, (t: WorkflowTestEnv, c: Cluster, id: string) => Promise<Handle>> = {
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

async function main(): Promise<void> {
  const cluster = fakeCluster({ phase: 'PENDING' });
  const t = await startWorkflowEnv(cluster.activities);
  try {
    mkdirSync(FIXTURES, { recursive: true });
    for (const f of readdirSync(FIXTURES)) if (/^job-history-.+\.pb$/.test(f)) rmSync(path.join(FIXTURES, f));
    for (const [name, drive] of Object.entries(SCENARIOS)) {
      const id = `replay-${name}`;
      const h = await drive(t, cluster, id);
      const history = await h.fetchHistory();
      const file = path.join(FIXTURES, `job-history-${id}.pb`);
      writeFileSync(file, proto.temporal.api.history.v1.History.encode(history).finish());
      console.log(`${path.relative(process.cwd(), file)}: ${history.events?.length ?? 0} events`);
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
