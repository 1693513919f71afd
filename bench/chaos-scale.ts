// The scale-out fault run on testkit/scale-out.ts's bed (two worker hosts, workers and APIs as processes,
// a round-robin client): a PySpark job launched on host-b (its only worker at first) is followed over SSE on
// one API and resumed on the other with Last-Event-ID; host-a's two workers start and host-b's stops (its job
// UNKNOWN with that cause, never FAILED); jobs through both APIs land on host-a, whose second worker is killed
// -9 while they run; host-b comes back (its job finishes there); one API is killed -9 and the client goes on
// through the other. A Socket.IO subscriber on each API follows host-b's job too. With `groups`, asynchronous executions on a scale-2 group go through both APIs the
// whole time (bench/chaos-groups.ts). Used by test/e2e/scale-out.test.ts (short) and `npm run chaos -- --scale`.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { io as ioClient } from 'socket.io-client';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../lib/config';
import { retentionScheduleId } from '../activities/retention';
import { Collections } from '../lib/mongo';
import { form } from '../testkit/http';
import { HOSTS, startScaleOut, type ScaleOut } from '../testkit/scale-out';
import { startServers } from '../testkit/servers';
import { printHeader, printJson } from '../testkit/stats';
import { sleep } from '../testkit/wait';
import { startGroupLoad, type ExecutionCheck } from './chaos-groups';
import { statesInOrder } from './chaos-run';
import { followJob } from './chaos-sse';
import { defer, envInt } from './lifecycle';

const SLOW_APP = `
import sys, time
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
for i in range(int(sys.argv[1])):
    spark.sparkContext.parallelize(range(100), 2).sum()
    time.sleep(1)
print("SCALE_DONE")
spark.stop()
`;
const ENDED = ['FINISHED', 'FAILED', 'CANCELED'];

export interface ScaleChaosOptions {
  /** How long the job on host-b runs (it must outlive its host's absence); host-a's jobs run half as long. */
  jobSeconds: number;
  /** Jobs submitted on host-a while its worker is killed. */
  jobsOnA: number;
  /** Asynchronous executions on a scale-2 group through both APIs, one every `everyMs`. */
  groups?: { everyMs: number };
  /** Where the group's marker file goes. */
  dir: string;
  log(line: string): void;
}

export interface ScaleJob {
  jobId: string;
  state: string;
  attempt: number;
  host?: string;
  /** The host it had to land on (host-b while only host-b had a worker, host-a while host-b had none). */
  expectedHost: string;
  /** `<host>/<driver folder>` of every folder of its drivers, on both hosts. */
  folders: string[];
}

export interface ScaleChaosReport {
  jobs: ScaleJob[];
  /** The host-b job while its host was gone. */
  absent: { state: string; error?: string };
  /** The SSE stream of the host-b job: states in the order they came, over several APIs. */
  stream: { states: string[]; connections: number; http5xx: number; inOrder: boolean };
  /** The host-b job's states as Socket.IO subscribers of `/jobs` on each API saw them (api-2's until it died). */
  sockets: string[][];
  /** Its logs read through the client after it ended (on host-b). */
  logsFromItsHost: boolean;
  /** spark_jobs of each API while both lived. */
  metrics: string[][];
  /** The retention schedule's action's task queue (the shared one: one sweep per period, not one per worker). */
  retentionQueue: string;
  executions?: ExecutionCheck & { hosts: string[] };
  /** Jobs not FINISHED at attempt 1 with one driver folder on their expected host. */
  wrong: number;
}

export async function runScaleChaos(bed: ScaleOut, o: ScaleChaosOptions): Promise<ScaleChaosReport> {
  const [api1, api2] = bed.apis;
  const submit = async (name: string, seconds: number, tags: string) => {
    const r = await bed.call(
      'POST',
      '/job/submit',
      form(
        { name, language: 'PYTHON', jobClass: 'slow', args: String(seconds), tags },
        { pyFiles: [{ name: 'slow.py', content: SLOW_APP }] },
      ),
    );
    if (r.status !== 200) throw new Error(`submit: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.jobId as string;
  };
  const jobOf = async (jobId: string) => (await bed.call('GET', `/job/${jobId}`)).body as Record<string, unknown>;
  const until = async (jobId: string, ok: (j: Record<string, unknown>) => boolean, ms: number, what: string) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const j = await jobOf(jobId);
      if (ok(j)) return j;
      if (Date.now() > deadline) throw new Error(`job ${jobId}: not ${what} within ${ms} ms (${String(j.state)})`);
      await sleep(300);
    }
  };
  const foldersOf = (jobId: string) =>
    HOSTS.flatMap((h) =>
      readdirSync(bed.driverDir(h))
        .filter((d) => d.includes(jobId))
        .map((d) => `${h}/${d}`),
    );
  const metricLines = async (origin: string) =>
    (await (await fetch(`${origin}/metrics`)).text())
      .split('\n')
      .filter((l) => l.startsWith('spark_jobs{'))
      .sort();

  // Both APIs observe the change feeds from their first scrape on.
  await Promise.all(bed.apis.map((a) => metricLines(a.origin)));

  // 1. A job on host-b, its only worker so far, followed over SSE: api-1 first, then api-2, then api-1 once
  //    api-2 is dead (what a balancer would do).
  const tag = `scale=${Date.now()}`;
  let connections = 0;
  const nextApi = () => (connections++ === 0 || !api2.alive() ? api1.url : api2.url);
  const follower = followJob(nextApi, `tags=${encodeURIComponent(tag)}`);
  // And a Socket.IO subscriber on each API, for the same job.
  const sockets = bed.apis.map((a) => {
    const states: string[] = [];
    const socket = ioClient(`${a.origin}/jobs`, { transports: ['websocket'], query: { tags: tag } });
    socket.on('job', (j: { state?: string }) => {
      if (j.state && states.at(-1) !== j.state) states.push(j.state);
    });
    return { socket, states, connected: new Promise<void>((r) => socket.once('connect', () => r())) };
  });
  await Promise.race([Promise.all([follower.connected, ...sockets.map((x) => x.connected)]), sleep(30_000)]);
  const onB = await submit('on-b', o.jobSeconds, tag);
  await until(onB, (j) => j.state === 'BUSY', 120_000, 'BUSY');
  follower.cut();
  o.log(`job ${onB} BUSY on host-b; its stream resumed on the other API`);

  // 2. host-a's two workers start (and the group, if any); host-b's stops: its job shows why.
  await Promise.all([bed.addWorker('host-a'), bed.addWorker('host-a')]);
  const groupLoad = o.groups ? await startGroupLoad(bed.call, o.dir, o.groups.everyMs, o.log) : undefined;
  const b1 = bed.workers.find((w) => w.host === 'host-b' && w.alive())!;
  b1.child.kill('SIGTERM');
  o.log(`host-b's worker stopped`);
  const absent = await until(onB, (j) => j.state !== 'BUSY', 60_000, 'other than BUSY');
  o.log(`job ${onB}: ${String(absent.state)} (${String(absent.error)})`);

  // 3. Jobs through both APIs land on host-a; its second worker is killed -9 while they run.
  const onA = await Promise.all(
    Array.from({ length: o.jobsOnA }, (_, i) => submit(`on-a-${i}`, Math.ceil(o.jobSeconds / 2), `${tag}-${i}`)),
  );
  await Promise.all(onA.map((j) => until(j, (r) => r.state === 'BUSY', 120_000, 'BUSY')));
  bed.workers.filter((w) => w.host === 'host-a')[1].kill();
  o.log(`kill -9 of a host-a worker while ${onA.length} jobs run there`);
  const metrics = await Promise.all(bed.apis.map((a) => metricLines(a.origin)));

  // 4. host-b comes back; then api-2 is killed -9.
  await bed.addWorker('host-b');
  o.log(`host-b's worker back`);
  api2.kill();
  o.log(`kill -9 of api-2`);
  const expected = new Map<string, string>([[onB, 'host-b'], ...onA.map((j) => [j, 'host-a'] as [string, string])]);
  const ended = await Promise.all(
    [...expected.keys()].map((j) => until(j, (r) => ENDED.includes(String(r.state)), 300_000, 'ended')),
  );
  const jobs: ScaleJob[] = ended.map((j) => ({
    jobId: String(j.jobId),
    state: String(j.state),
    attempt: Number(j.attempt),
    host: j.host as string | undefined,
    expectedHost: expected.get(String(j.jobId))!,
    folders: foldersOf(String(j.jobId)),
  }));
  const logs = await bed.call('GET', `/job/${onB}/logs?logSize=2000`);
  const deadline = Date.now() + 30_000;
  while (follower.states.at(-1) !== 'FINISHED' && Date.now() < deadline) await sleep(200);
  follower.close();
  for (const x of sockets) x.socket.close();
  const executions = groupLoad ? await groupLoad.stop(120_000) : undefined;
  // The hosts the group's instances ran on (records of every instance, ended ones too).
  const groupHosts = async () =>
    ((await bed.store.col(Collections.jobs).distinct('host', { groupId: { $exists: true } })) as string[]).sort();
  const sched = await bed.temporal.schedule.getHandle(retentionScheduleId(bed.config.TASK_QUEUE)).describe();
  return {
    jobs,
    absent: { state: String(absent.state), error: absent.error as string | undefined },
    stream: {
      states: follower.states,
      connections,
      http5xx: follower.http5xx,
      inOrder: statesInOrder(follower.states),
    },
    sockets: sockets.map((x) => x.states),
    logsFromItsHost: logs.status === 200 && JSON.stringify(logs.body).includes('SCALE_DONE'),
    metrics,
    retentionQueue: sched.action.type === 'startWorkflow' ? sched.action.taskQueue : '',
    ...(executions ? { executions: { ...executions, hosts: await groupHosts() } } : {}),
    wrong: jobs.filter(
      (j) =>
        j.state !== 'FINISHED' ||
        j.attempt !== 1 ||
        j.host !== j.expectedHost ||
        j.folders.join() !== `${j.expectedHost}/job-${j.jobId}-1`,
    ).length,
  };
}

/**
 * `npm run chaos -- --scale`: the long form, on servers of its own: CHAOS_ROUNDS (1) runs of the faults above
 * on fresh beds, each with CHAOS_JOB_SECONDS (40) long jobs, CHAOS_SCALE_JOBS (4) jobs on host-a and an
 * execution on a scale-2 group every 2 s through both APIs. Exit code 1 unless every job finished once on its
 * own host, the stream missed nothing, the APIs' metrics agreed and no execution was lost or doubled.
 */
export async function scaleChaosMain(): Promise<void> {
  const rounds = envInt('CHAOS_ROUNDS', 1);
  const jobSeconds = envInt('CHAOS_JOB_SECONDS', 40);
  const jobsOnA = envInt('CHAOS_SCALE_JOBS', 4);
  printHeader(`chaos --scale — two worker hosts, three workers, two APIs; ${rounds} round(s)`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-chaos-scale-'));
  if (!process.env.KEEP_BENCH_DIR) defer('temp folder', () => rmSync(dir, { recursive: true, force: true }));
  const servers = await startServers({ dir, persistent: false });
  defer('servers', () => servers.stop(), 30_000);
  const config = loadConfig(process.env);
  let bad = 0;
  for (let round = 1; round <= rounds; round++) {
    const id = `r${round}${Date.now().toString(36)}`;
    const bed = await startScaleOut({
      temporalAddress: servers.temporalAddress,
      mongoUrl: servers.mongoUrl,
      dir: path.join(dir, id),
      id,
      prefix: 'chaos',
      workers: ['host-b'],
      env: { WATCH_INTERVAL_MS: '300', HOST_ABSENT_MS: '2000', LAUNCH_AT_SUBMIT: 'off', SECRET_KEY: config.SECRET_KEY },
    });
    defer(`bed ${round}`, () => bed.stop(), 60_000);
    const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} [${round}] ${line}`);
    const r = await runScaleChaos(bed, {
      jobSeconds,
      jobsOnA,
      groups: { everyMs: 2000 },
      dir: path.join(dir, id),
      log,
    });
    await bed.stop();
    const metricsAgree = JSON.stringify(r.metrics[0]) === JSON.stringify(r.metrics[1]);
    const streamOk =
      r.stream.inOrder &&
      r.stream.http5xx === 0 &&
      r.stream.states.at(-1) === 'FINISHED' &&
      JSON.stringify(r.sockets[0]) === JSON.stringify(r.stream.states);
    const absentOk = r.absent.state === 'UNKNOWN' && (r.absent.error ?? '').includes("'host-b'");
    const ex = r.executions!;
    console.log(`
  round ${round}
  jobs           ${r.jobs.length}: ${r.jobs.map((j) => `${j.state}@${j.host ?? '?'} (attempt ${j.attempt}, ${j.folders.length} folder)`).join(', ')}
  wrong          ${r.wrong}   (not FINISHED once on the host it had to land on)
  host-b gone    ${r.absent.state}: ${r.absent.error ?? ''}
  stream         ${r.stream.states.join(' → ')} over ${r.stream.connections} connections, ${r.stream.http5xx} × 5xx
  Socket.IO      ${r.sockets.map((st, i) => `api-${i + 1}: ${st.join(' → ')}`).join('; ')}
  logs           ${r.logsFromItsHost ? 'read on host-b' : 'NOT read'}
  metrics        ${metricsAgree ? 'agree' : 'DIFFER'} across APIs (${r.metrics[0].length} spark_jobs series)
  retention      one schedule, on ${r.retentionQueue}
  executions     ${ex.submitted} submitted, ${ex.succeeded} ok, ${ex.failedClearly} failed with a message, ${ex.lost} lost, ${ex.duplicated} duplicated; instances on ${ex.hosts.join(', ')}`);
    printJson('chaos-scale', { round, ...r });
    if (r.wrong || !metricsAgree || !streamOk || !absentOk || !r.logsFromItsHost || ex.lost || ex.duplicated) bad++;
  }
  console.log(bad === 0 ? '\nPASS' : `\nFAIL: ${bad} round(s)`);
  if (bad) throw new Error('the scale-out run lost, doubled or stranded something (see above)');
}
