// The scale-out fault run on testkit/scale-out.ts's bed (two worker hosts, workers and APIs as processes,
// a round-robin client): a PySpark job launched on host-b (its only worker at first) is followed over SSE on
// one API and resumed on the other with Last-Event-ID; host-a's two workers start and host-b's stops (its job
// UNKNOWN with that cause, never FAILED); jobs through both APIs land on host-a, whose second worker is killed
// -9 while they run; host-b comes back (its job finishes there); one API is killed -9 and the client goes on
// through the other. A Socket.IO subscriber on each API follows host-b's job too. Once host-b is gone (so
// their drivers are host-a's): with `groups`, executions on a group, asynchronous and synchronous, through
// both APIs until the end (bench/chaos-groups.ts); with `sql`, statements on the default cluster's SPARK_SQL
// engine through both (bench/chaos-sql.ts); with `schedule`, a schedule created through api-1, its jobs read
// and it paused through api-2. The APIs' metrics are read while both live until they agree, and api-1's
// counts at the end against the store. Used by test/e2e/scale-out.test.ts (short) and `npm run chaos -- --scale`.
// Over 300 lines on purpose: one scripted scenario whose steps read in order, and the report its test checks.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { io as ioClient } from 'socket.io-client';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../lib/config';
import { retentionScheduleId } from '../activities/retention';
import { scheduleId as temporalScheduleId } from '../domain/ids';
import { Collections } from '../lib/mongo';
import { form, request, type Reply } from '../testkit/http';
import { HOSTS, startScaleOut, type ScaleOut } from '../testkit/scale-out';
import { startServers } from '../testkit/servers';
import { printHeader, printJson } from '../testkit/stats';
import { sleep } from '../testkit/wait';
import { startGroupLoad, type ExecutionCheck, type GroupLoad, type GroupLoadOptions } from './chaos-groups';
import { statesInOrder } from './chaos-run';
import { startSqlLoad, type SqlLoad, type StatementCheck } from './chaos-sql';
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
const TICK_APP = 'import sys\nprint("TICK", sys.argv[1:])\n';
const ENDED = ['FINISHED', 'FAILED', 'CANCELED'];
/** The series compared across APIs: read from the store at each scrape, or counted from its change feeds. */
const METRICS = [
  'spark_jobs{',
  'spark_group_executions_total{',
  'spark_sql_statements_total{',
  'spark_schedule_fire_delay_seconds_count{',
];

/** Hour boundaries (the retention schedule's `every: '1h'` firings) strictly after `from`, up to `to`. */
const HOUR_MS = 3_600_000;
const hoursCrossed = (from: number, to: number) => Math.floor(to / HOUR_MS) - Math.floor(from / HOUR_MS);

export interface ScaleChaosOptions {
  /** How long the job on host-b runs (it must outlive its host's absence); host-a's jobs run half as long. */
  jobSeconds: number;
  /** Jobs submitted on host-a while its worker is killed. */
  jobsOnA: number;
  /** Executions on a group through both APIs, one every `everyMs` (scale 2, all asynchronous, unless said). */
  groups?: { everyMs: number } & GroupLoadOptions;
  /** SQL statements on the default cluster's SPARK_SQL engine through both APIs, one every `everyMs`. */
  sql?: { everyMs: number };
  /** A schedule (cron, e.g. '@every 5s') created through api-1, paused through api-2 once it has `ticks` jobs. */
  schedule?: { cron: string; ticks: number };
  /**
   * What takes its load before host-a's jobs are submitted (and so before the worker's kill): the group
   * ('group': the short form; the SQL engine starts meanwhile and its statements flow through the API's kill
   * only), or the group and the SQL engine ('all': the long form). Without it both start while host-a's
   * jobs run and the worker is killed, their launches perhaps in flight then.
   */
  loadsFirst?: 'group' | 'all';
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
  /** The METRICS series of each API while both lived, once they agreed (or the last pair read). */
  metrics: string[][];
  /** api-1's counts at the end (from its change feeds) against the store's documents. */
  counted: { executions: [number, number]; statements: [number, number]; scheduled: [number, number] };
  /** The retention schedule's action's task queue (the shared one: one sweep per period, not one per worker). */
  retentionQueue: string;
  /**
   * Sweeps the retention schedule started (one at its creation, then one on each hour) and worker processes
   * started; `expectedRuns`: 1 and one per hour boundary the run crossed since the schedule's creation.
   */
  retention: { runs: number; expectedRuns: number; workerStarts: number };
  executions?: ExecutionCheck & { hosts: string[] };
  statements?: StatementCheck;
  schedule?: ScheduleCheck;
  /** Jobs not FINISHED at attempt 1 with one driver folder on their expected host. */
  wrong: number;
}

export interface ScheduleCheck {
  /** Its jobs as api-2 listed them (GET /schedule/{id}) before it paused it. */
  seenOnOther: number;
  /** Its jobs at the end: FINISHED, attempt 1, and the host each ran on. */
  jobs: { jobId: string; state: string; attempt: number; host?: string }[];
  /** Distinct tick times among its jobs' ids (Temporal appends a tick's nominal time to its run's id). */
  ticks: number;
  /** Runs its Temporal Schedule started. */
  actionsTaken: number;
  /** Job ids of its Temporal Schedule's recent runs not among its jobs, and the reverse. */
  unmatched: string[];
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

  // 2. host-a's two workers start (host-b's job is launched: it stays host-b's); host-b's worker stops; the
  //    group, the SQL engine and the schedule start (their drivers can only land on host-a now); host-b's job
  //    shows why it is not followed.
  const hostA = Promise.all([bed.addWorker('host-a'), bed.addWorker('host-a')]);
  hostA.catch(() => undefined);
  const b1 = bed.workers.find((w) => w.host === 'host-b' && w.alive())!;
  await new Promise((r) => (b1.child.once('exit', r), b1.child.kill('SIGTERM')));
  o.log(`host-b's worker stopped`);
  // Executions and statements answered so far (the round-robin client, counted).
  const answered = { group: 0, sql: 0 };
  const counting =
    (kind: keyof typeof answered) =>
    (method: string, p: string, body?: unknown): Promise<Reply> =>
      bed.call(method, p, body).finally(() => {
        if (method === 'POST' && /\/(job|sql)\/(execute|submit)$/.test(p)) answered[kind]++;
      });
  const groupLoadP: Promise<GroupLoad | undefined> = o.groups
    ? startGroupLoad(counting('group'), o.dir, o.groups.everyMs, o.log, o.groups)
    : Promise.resolve(undefined);
  const sqlLoadP: Promise<SqlLoad | undefined> = o.sql
    ? startSqlLoad(counting('sql'), o.sql.everyMs, o.log)
    : Promise.resolve(undefined);
  const scheduleP = o.schedule ? runSchedule(bed, o.schedule, o.log) : Promise.resolve(undefined);
  // Whatever fails first fails the run, not an unhandled rejection later.
  for (const p of [groupLoadP, sqlLoadP, scheduleP]) p.catch(() => undefined);
  const loads = Promise.all([groupLoadP, sqlLoadP]);
  /** Until each load has had `n` more calls answered (or cut) than `from`. */
  const flowed = async (n: number, from = { ...answered }) => {
    const deadline = Date.now() + 120_000;
    const short = () => (o.groups && answered.group < from.group + n) || (o.sql && answered.sql < from.sql + n);
    while (short() && Date.now() < deadline) await sleep(200);
  };
  await hostA;
  const absent = await until(onB, (j) => j.state !== 'BUSY', 60_000, 'other than BUSY');
  o.log(`job ${onB}: ${String(absent.state)} (${String(absent.error)})`);

  // 3. Jobs through both APIs land on host-a; its second worker is killed -9 while they run (with
  //    `loadsFirst`, while the executions, and statements, go on too).
  if (o.loadsFirst === 'all') await loads.then(() => flowed(3));
  else if (o.loadsFirst === 'group') await groupLoadP;
  const onA = await Promise.all(
    Array.from({ length: o.jobsOnA }, (_, i) => submit(`on-a-${i}`, Math.ceil(o.jobSeconds / 2), `${tag}-${i}`)),
  );
  await Promise.all(onA.map((j) => until(j, (r) => r.state === 'BUSY', 120_000, 'BUSY')));
  const runningAtKill = (await Promise.all(onA.map(jobOf))).filter((j) => j.state === 'BUSY').length;
  bed.workers.filter((w) => w.host === 'host-a')[1].kill();
  o.log(`kill -9 of a host-a worker while ${runningAtKill} of ${onA.length} jobs run there`);

  // 4. host-b comes back; once executions and statements flow, the APIs' metrics agree; then api-2 is killed -9.
  const [[groupLoad, sqlLoad]] = await Promise.all([
    loads,
    bed.addWorker('host-b').then(() => o.log(`host-b's worker back`)),
  ]);
  await flowed(3);
  const metrics = await agreeingMetrics(bed, 20_000);
  const schedule = await scheduleP;
  api2.kill();
  o.log(`kill -9 of api-2`);
  const afterKill = flowed(3);
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
  o.log(`the ${ended.length} jobs ended`);
  const logs = await bed.call('GET', `/job/${onB}/logs?logSize=2000`);
  const deadline = Date.now() + 30_000;
  while (follower.states.at(-1) !== 'FINISHED' && Date.now() < deadline) await sleep(200);
  follower.close();
  for (const x of sockets) x.socket.close();
  await afterKill;
  const [executions, statements, scheduled] = await Promise.all([
    groupLoad?.stop(120_000),
    sqlLoad?.stop(),
    schedule?.finish(120_000),
  ]);
  if (groupLoad || sqlLoad || schedule) o.log('executions, statements and scheduled runs checked');
  // The hosts the group's instances ran on (records of every instance, ended ones too).
  const groupHosts = async () =>
    ((await bed.store.col(Collections.jobs).distinct('host', { groupId: { $exists: true } })) as string[]).sort();
  const sched = await bed.temporal.schedule.getHandle(retentionScheduleId(bed.config.TASK_QUEUE)).describe();
  const counted = await countedAgainstStore(bed, api1.origin, {
    groupId: groupLoad?.groupId,
    scheduleId: schedule?.scheduleId,
  });
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
    counted,
    retentionQueue: sched.action.type === 'startWorkflow' ? sched.action.taskQueue : '',
    retention: {
      runs: sched.info.numActionsTaken,
      expectedRuns: 1 + hoursCrossed(sched.info.createdAt.getTime(), Date.now()),
      workerStarts: bed.workers.length,
    },
    ...(executions ? { executions: { ...executions, hosts: await groupHosts() } } : {}),
    ...(statements ? { statements } : {}),
    ...(scheduled ? { schedule: scheduled } : {}),
    wrong: jobs.filter(
      (j) =>
        j.state !== 'FINISHED' ||
        j.attempt !== 1 ||
        j.host !== j.expectedHost ||
        j.folders.join() !== `${j.expectedHost}/job-${j.jobId}-1`,
    ).length,
  };
}

const metricLines = async (origin: string) =>
  (await (await fetch(`${origin}/metrics`)).text())
    .split('\n')
    .filter((l) => METRICS.some((m) => l.startsWith(m)))
    .sort();

/** Sum of a series' values over the lines whose labels contain `label`. */
const sumOf = (lines: string[], series: string, label = '') =>
  lines
    .filter((l) => l.startsWith(`${series}{`) && l.includes(label))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

/**
 * Both APIs' METRICS series, read side by side until they are the same (the load goes on, so one read may
 * fall between a change and its observation by one API); the last pair if they never agree within `ms`.
 */
async function agreeingMetrics(bed: ScaleOut, ms: number): Promise<string[][]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const lines = await Promise.all(bed.apis.map((a) => metricLines(a.origin)));
    if (JSON.stringify(lines[0]) === JSON.stringify(lines[1]) || Date.now() > deadline) return lines;
    await sleep(250);
  }
}

/** api-1's counts of executions, statements and scheduled jobs (its change feeds) and the store's. */
async function countedAgainstStore(
  bed: ScaleOut,
  origin: string,
  ids: { groupId?: string; scheduleId?: string },
): Promise<ScaleChaosReport['counted']> {
  const stored = {
    executions: ids.groupId
      ? await bed.store.col(Collections.results).countDocuments({ groupId: ids.groupId, endTime: { $type: 'number' } })
      : 0,
    statements: await bed.store
      .col(Collections.sqlHistory)
      .countDocuments({ state: { $ne: 'RUNNING' }, completionTime: { $type: 'number' } }),
    scheduled: ids.scheduleId
      ? await bed.store.col(Collections.jobs).countDocuments({ scheduleId: ids.scheduleId })
      : 0,
  };
  // The feeds reach the API a moment after the store: read until they agree (or 10 s).
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = await metricLines(origin);
    const counted = {
      executions: ids.groupId ? sumOf(lines, 'spark_group_executions_total', `group="${ids.groupId}"`) : 0,
      statements: sumOf(lines, 'spark_sql_statements_total'),
      scheduled: ids.scheduleId
        ? sumOf(lines, 'spark_schedule_fire_delay_seconds_count', `schedule="${ids.scheduleId}"`)
        : 0,
    };
    const done =
      counted.executions === stored.executions &&
      counted.statements === stored.statements &&
      counted.scheduled === stored.scheduled;
    if (done || Date.now() > deadline)
      return {
        executions: [counted.executions, stored.executions],
        statements: [counted.statements, stored.statements],
        scheduled: [counted.scheduled, stored.scheduled],
      };
    await sleep(250);
  }
}

/**
 * A schedule created through api-1; once api-2 lists `ticks` of its jobs, api-2 pauses it. `finish` waits
 * until its runs have ended and holds its jobs against its Temporal Schedule's runs: one job per tick.
 */
async function runSchedule(
  bed: ScaleOut,
  o: { cron: string; ticks: number },
  log: (line: string) => void,
): Promise<{ scheduleId: string; finish(ms: number): Promise<ScheduleCheck> }> {
  const [api1, api2] = bed.apis;
  const created = await request(
    api1.url,
    'POST',
    '/schedule',
    form(
      { name: `scale-${Date.now()}`, cron: o.cron, language: 'PYTHON', jobClass: 'tick' },
      { pyFiles: [{ name: 'tick.py', content: TICK_APP }] },
    ),
  );
  if (created.status !== 200) throw new Error(`schedule: HTTP ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.scheduleId as string;
  log(`schedule ${id} (${o.cron}) created through api-1`);
  let seenOnOther = 0;
  const deadline = Date.now() + 180_000;
  for (;;) {
    const r = await request(api2.url, 'GET', `/schedule/${id}`);
    seenOnOther = ((r.body?.jobs ?? []) as unknown[]).length;
    if (seenOnOther >= o.ticks) break;
    if (Date.now() > deadline) throw new Error(`schedule ${id}: ${seenOnOther} job(s) through api-2 within 180 s`);
    await sleep(500);
  }
  const paused = await request(api2.url, 'POST', `/schedule/${id}/pause`);
  if (paused.status !== 200) throw new Error(`schedule pause: HTTP ${paused.status} ${JSON.stringify(paused.body)}`);
  log(`schedule ${id}: ${seenOnOther} job(s) through api-2, paused there`);
  const handle = bed.temporal.schedule.getHandle(temporalScheduleId(id));
  return {
    scheduleId: id,
    async finish(ms) {
      const jobs = () =>
        bed.store
          .col(Collections.jobs)
          .find({ scheduleId: id })
          .project<{ jobId: string; state: string; attempt: number; host?: string }>({
            _id: 0,
            jobId: 1,
            state: 1,
            attempt: 1,
            host: 1,
          })
          .toArray();
      const until = Date.now() + ms;
      for (;;) {
        const [d, js] = await Promise.all([handle.describe(), jobs()]);
        const settled =
          d.info.runningActions.length === 0 &&
          js.length === d.info.numActionsTaken &&
          js.every((j) => ENDED.includes(j.state));
        if (settled || Date.now() > until) {
          const runIds = d.info.recentActions.map((a) => a.action.workflow.workflowId.replace(/^job\//, ''));
          const jobIds = js.map((j) => j.jobId);
          return {
            seenOnOther,
            jobs: js.map((j) => ({ jobId: j.jobId, state: j.state, attempt: j.attempt, host: j.host })),
            ticks: new Set(jobIds.map((j) => j.slice(-20))).size,
            actionsTaken: d.info.numActionsTaken,
            unmatched: [...runIds.filter((r) => !jobIds.includes(r)), ...jobIds.filter((j) => !runIds.includes(j))],
          };
        }
        await sleep(500);
      }
    },
  };
}

/**
 * `npm run chaos -- --scale`: the long form, on servers of its own: CHAOS_ROUNDS (1) runs of the faults above
 * on fresh beds, each with CHAOS_JOB_SECONDS (40) long jobs, CHAOS_SCALE_JOBS (4) jobs on host-a, an
 * execution on a scale-2 group every second through both APIs (every third synchronous), an SQL statement
 * every second and a schedule every 5 s paused after 4 jobs. Exit code 1 unless every job finished once on its
 * own host, the stream missed nothing, the APIs' metrics agreed (with each other, and api-1's with the store),
 * no execution or statement was lost or doubled, the schedule fired one job per tick and retention ran once.
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
      groups: { everyMs: 1000, scale: 2, syncEvery: 3 },
      sql: { everyMs: 1000 },
      schedule: { cron: '@every 5s', ticks: 4 },
      loadsFirst: 'all',
      dir: path.join(dir, id),
      log,
    });
    await bed.stop();
    const counts = Object.values(r.counted);
    const metricsAgree =
      JSON.stringify(r.metrics[0]) === JSON.stringify(r.metrics[1]) && counts.every(([a, b]) => a === b);
    const sc = r.schedule!;
    const scheduleOk =
      sc.unmatched.length === 0 &&
      sc.ticks === sc.jobs.length &&
      sc.jobs.length === sc.actionsTaken &&
      sc.jobs.every((j) => j.state === 'FINISHED' && j.attempt === 1);
    const st = r.statements!;
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
  metrics        ${metricsAgree ? 'agree' : 'DIFFER'} across APIs (${r.metrics[0].length} series: jobs, executions, statements, scheduled jobs)
  counted        api-1 / store: ${Object.entries(r.counted)
    .map(([k, [a, b]]) => `${k} ${a}/${b}`)
    .join(', ')}
  retention      one schedule, on ${r.retentionQueue}: ${r.retention.runs} run(s) (expected ${r.retention.expectedRuns}) for ${r.retention.workerStarts} worker starts
  executions     ${ex.submitted} submitted (${ex.sync} sync), ${ex.succeeded} ok, ${ex.failedClearly} failed with a message, ${ex.lost} lost, ${ex.duplicated} run twice, ${ex.doubleResults} with two results, ${ex.cut} cut; instances on ${ex.hosts.join(', ')}
  statements     ${st.sent} sent, ${st.ok} right, ${st.failedClearly} failed with a message, ${st.lost} lost, ${st.cut} cut
  schedule       ${sc.jobs.length} job(s) for ${sc.ticks} tick(s), ${sc.actionsTaken} run(s) started; ${sc.seenOnOther} seen through api-2; ${sc.jobs.map((j) => `${j.state}@${j.host ?? '?'}`).join(', ')}${sc.unmatched.length ? `; UNMATCHED ${sc.unmatched.join(', ')}` : ''}${
    ex.errors.length
      ? `
  errors         ${[...ex.errors, ...st.errors].join(' | ')}`
      : ''
  }`);
    printJson('chaos-scale', { round, ...r });
    const once = r.retention.runs === 1 && ex.lost + ex.duplicated + ex.doubleResults + st.lost === 0;
    if (r.wrong || !metricsAgree || !streamOk || !absentOk || !r.logsFromItsHost || !once || !scheduleOk) bad++;
  }
  console.log(bad === 0 ? '\nPASS' : `\nFAIL: ${bad} round(s)`);
  if (bad) throw new Error('the scale-out run lost, doubled or stranded something (see above)');
}
