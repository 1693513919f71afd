// The fault-injection run behind `npm run chaos` and test/e2e/chaos.test.ts: against the supervised stack
// (bench/chaos-stack.ts) it keeps a mixed load going (a PySpark job per fault, a schedule ticking every
// minute, asynchronous executions on a group: chaos-groups.ts, SQL statements: chaos-sql.ts) and kill -9s each named process in turn while its job is BUSY, then checks that nothing was
// lost or doubled: every job FINISHED once, attempt 1, one driver folder and one Spark start, its
// stream's states in order; every schedule tick ran exactly once; no 5xx answered.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { singleJobDriverId } from '../domain/job';
import { form, request } from '../testkit/http';
import { sleep } from '../testkit/wait';
import { startGroupLoad, type ExecutionCheck } from './chaos-groups';
import { startSqlLoad, type StatementCheck } from './chaos-sql';
import { followJob } from './chaos-sse';
import type { ChaosStack, Victim } from './chaos-stack';

export interface ChaosOptions {
  /** Killed one after another, one fault per job. */
  victims: Victim[];
  /** How long each PySpark job runs (it sleeps in steps between small Spark actions). */
  jobSeconds: number;
  /** Also a schedule `@every 1m` for the whole run, checked for lost and doubled ticks. */
  schedule: boolean;
  /** Also asynchronous executions on a PYTHON group of scale 2, one every `everyMs`, through every fault. */
  groups?: { everyMs: number };
  /** Also SQL statements on the default cluster's SPARK_SQL engine, one every `everyMs`, through every fault. */
  sql?: { everyMs: number };
  /** Longest wait for a job to end after its fault. */
  jobTimeoutMs: number;
  log: (line: string) => void;
}

export interface JobCheck {
  victim: Victim | 'schedule';
  jobId: string;
  state: string;
  attempt: number;
  drivers: number;
  sparkStarts: number;
  states: string[];
  inOrder: boolean;
}

export interface ChaosReport {
  jobs: JobCheck[];
  /** Jobs that did not finish (FAILED, or not ended in time) plus schedule ticks that never ran. */
  lost: number;
  /** Jobs with a second attempt, driver folder or Spark start, plus schedule ticks run twice. */
  duplicated: number;
  outOfOrder: number;
  http5xx: number;
  /** 503 "unavailable, try again" answers while MongoDB or Temporal was down (expected, counted apart). */
  http503: number;
  ticks?: { expected: string[]; ran: string[] };
  /** The group executions' outcome (with `groups`); their lost and duplicated are in the totals above. */
  executions?: ExecutionCheck;
  /** The SQL statements' outcome (with `sql`); their lost are in the totals above. */
  statements?: StatementCheck;
  restarts: Record<string, number>;
}

const SLOW_APP = `
import sys, time
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
for i in range(int(sys.argv[1])):
    spark.sparkContext.parallelize(range(100), 2).sum()
    time.sleep(1)
print("CHAOS_DONE")
spark.stop()
`;
const QUICK_APP = `
from pyspark.sql import SparkSession
print("TICK", SparkSession.builder.getOrCreate().sparkContext.parallelize(range(10)).sum())
`;
const ORDER = ['SUBMITTED', 'STARTING', 'BUSY', 'FINISHED'];
const TERMINAL = ['FINISHED', 'FAILED', 'CANCELED', 'LOST'];

export async function runChaos(stack: ChaosStack, o: ChaosOptions): Promise<ChaosReport> {
  const counts = { http5xx: 0, http503: 0 };
  const call = async (method: string, p: string, body?: unknown) => {
    for (;;) {
      const r = await request(stack.url, method, p, body).catch(() => undefined);
      if (r && r.status === 503) counts.http503++;
      else if (r && r.status >= 500) counts.http5xx++;
      // Refused (the API restarting) or unavailable: a client tries again.
      if (r && r.status !== 503) return r;
      await sleep(500);
    }
  };
  const getJob = async (jobId: string) => (await call('GET', `/job/${jobId}`)).body as Record<string, unknown>;

  let scheduleId: string | undefined;
  if (o.schedule) {
    const r = await call(
      'POST',
      '/schedule',
      form(
        { name: `chaos-${Date.now()}`, cron: '@every 1m', language: 'PYTHON', jobClass: 'tick' },
        { pyFiles: [{ name: 'tick.py', content: QUICK_APP }] },
      ),
    );
    if (r.status !== 200) throw new Error(`schedule: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    scheduleId = r.body.scheduleId as string;
    o.log(`schedule ${scheduleId} every minute`);
  }
  const scheduleFrom = Date.now();
  const groupLoad = o.groups ? await startGroupLoad(call, stack.dir, o.groups.everyMs, o.log) : undefined;
  const sqlLoad = o.sql ? await startSqlLoad(call, o.sql.everyMs, o.log) : undefined;

  const jobs: JobCheck[] = [];
  for (const [i, victim] of o.victims.entries()) {
    // A tag only this job carries: its stream is open before the submit, so no state goes unseen.
    const tag = `chaos=${victim}-${i}-${Date.now()}`;
    const follower = followJob(stack.url, `tags=${encodeURIComponent(tag)}`);
    // Submitted once the API has subscribed the stream (a fixed pause was too short on a loaded machine).
    await Promise.race([follower.connected, sleep(30_000)]);
    const r = await call(
      'POST',
      '/job/submit',
      form(
        { name: `chaos-${victim}`, language: 'PYTHON', jobClass: 'slow', args: String(o.jobSeconds), tags: tag },
        { pyFiles: [{ name: 'slow.py', content: SLOW_APP }] },
      ),
    );
    if (r.status !== 200) throw new Error(`submit: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    const jobId = r.body.jobId as string;
    await waitFor(async () => (await getJob(jobId)).state === 'BUSY', 180_000, `job ${jobId} BUSY`);
    // Spark is up and working, not just launched.
    await sleep(Math.min(8, o.jobSeconds / 3) * 1000);
    const pid = stack.pidOf(victim);
    process.kill(pid, 'SIGKILL');
    o.log(`kill -9 ${victim} (pid ${pid}) while job ${jobId} is BUSY`);
    const ended = await waitFor(
      async () => {
        const j = await getJob(jobId);
        return TERMINAL.includes(String(j.state)) ? j : undefined;
      },
      o.jobTimeoutMs,
      `job ${jobId} ended`,
    ).catch(() => undefined);
    const job = ended ?? (await getJob(jobId));
    // The stream's last event may trail the read model by a moment.
    await waitFor(async () => follower.states.at(-1) === job.state, 15_000, 'stream caught up').catch(() => undefined);
    follower.close();
    counts.http5xx += follower.http5xx;
    const check = checkJob(stack, victim, jobId, job, follower.states);
    jobs.push(check);
    o.log(
      `  ${check.state}, attempt ${check.attempt}, ${check.drivers} driver folder(s), ${check.sparkStarts} Spark start(s), stream ${check.states.join(' → ')}`,
    );
  }

  let executions: ExecutionCheck | undefined;
  if (groupLoad) {
    executions = await groupLoad.stop(o.jobTimeoutMs);
    o.log(
      `group executions: ${executions.submitted} submitted, ${executions.succeeded} ok, ${executions.failedClearly} failed with a message, ${executions.lost} lost, ${executions.duplicated} run twice${executions.errors.length ? `; errors: ${executions.errors.join(' | ')}` : ''}`,
    );
  }

  const statements = await sqlLoad?.stop();
  if (statements)
    o.log(
      `SQL statements: ${statements.sent} sent, ${statements.ok} right, ${statements.failedClearly} failed with a message, ${statements.lost} lost${statements.errors.length ? `; ${statements.errors.join(' | ')}` : ''}`,
    );

  let ticks: ChaosReport['ticks'];
  if (scheduleId) {
    // Ticks due at least a minute before the pause have had their time to start.
    const pausedAt = Date.now();
    await call('POST', `/schedule/${scheduleId}/pause`);
    const expected: string[] = [];
    for (let t = Math.ceil(scheduleFrom / 60_000) * 60_000; t <= pausedAt - 60_000; t += 60_000)
      expected.push(new Date(t).toISOString().replace('.000Z', 'Z'));
    const runsOf = async () =>
      ((await call('GET', `/schedule/${scheduleId}`)).body.jobs as { jobId: string; state: string }[]) ?? [];
    await waitFor(
      async () => (await runsOf()).every((j) => TERMINAL.includes(j.state)),
      o.jobTimeoutMs,
      'schedule runs ended',
    ).catch(() => undefined);
    const runs = await runsOf();
    const ran = runs.map((j) => j.jobId.slice(`sched-${scheduleId}-`.length));
    ticks = { expected, ran };
    for (const j of runs) jobs.push(checkJob(stack, 'schedule', j.jobId, await getJob(j.jobId), undefined));
    o.log(`schedule: ${expected.length} ticks due, runs ${ran.join(', ') || 'none'}`);
  }

  const lostTicks = ticks ? ticks.expected.filter((t) => !ticks.ran.includes(t)).length : 0;
  const doubledTicks = ticks ? ticks.ran.length - new Set(ticks.ran).size : 0;
  return {
    jobs,
    lost:
      jobs.filter((j) => j.state !== 'FINISHED').length + lostTicks + (executions?.lost ?? 0) + (statements?.lost ?? 0),
    duplicated:
      jobs.filter((j) => j.attempt !== 1 || j.drivers !== 1 || j.sparkStarts !== 1).length +
      doubledTicks +
      (executions?.duplicated ?? 0),
    outOfOrder: jobs.filter((j) => !j.inOrder).length,
    http5xx: counts.http5xx,
    http503: counts.http503,
    ticks,
    executions,
    statements,
    restarts: stack.restarts(),
  };
}

function checkJob(
  stack: ChaosStack,
  victim: JobCheck['victim'],
  jobId: string,
  job: Record<string, unknown>,
  streamed: string[] | undefined,
): JobCheck {
  // Every attempt's folder: job-<jobId as a folder name>-<attempt>.
  const prefix = singleJobDriverId(jobId, 0).slice(0, -1);
  const folders = existsSync(stack.driverDir) ? readdirSync(stack.driverDir).filter((d) => d.startsWith(prefix)) : [];
  const sparkStarts = folders
    .map((d) => path.join(stack.driverDir, d, 'driver.log'))
    .filter((f) => existsSync(f))
    .reduce((n, f) => n + (readFileSync(f, 'utf8').match(/Running Spark version/g) ?? []).length, 0);
  const states = streamed ?? [];
  return {
    victim,
    jobId,
    state: String(job.state),
    attempt: Number(job.attempt),
    drivers: folders.length,
    sparkStarts,
    states,
    inOrder: streamed === undefined || (statesInOrder(states) && states.at(-1) === job.state),
  };
}

/** The lifecycle states seen only move forward (other states, e.g. UNKNOWN during an outage, may come between). */
export function statesInOrder(states: string[]): boolean {
  const ranks = states.map((s) => ORDER.indexOf(s)).filter((r) => r >= 0);
  return ranks.every((r, i) => i === 0 || r >= ranks[i - 1]);
}

async function waitFor<T>(fn: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(1000);
  }
}
