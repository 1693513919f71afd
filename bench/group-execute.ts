// (c) Execute-and-wait overhead in warm groups, one PYTHON and one SCALA, each of 2 real local Spark
// drivers running runner/runner.py; POST /group/{id}/job/execute of a job class that returns at once: a
// Python IlumJob, and a Java cloud.ilum.job.Job (compiled here) that the runner calls in the driver's JVM.
// Overhead is the HTTP round trip minus the time the runner itself measured around run()
// (result.endTime − startTime). Then 8 concurrent callers for a fixed time, per group. Beside each, its
// floor: the same calls straight to the drivers' direct channels (no API). Targets: round trip
// p50 < 8 ms, p99 < 30 ms; 8 callers > 150 executions/s.
// Data in files, as `npm start` keeps it. Then the stack is given BENCH_PAST_WRITES (100,000; 0: skip) past
// writes of job records (whole-document replaces, as the projection writes them), and the same figures are
// measured again beside the fresh ones: a stack that has done a week's work should be as fast as a new one.
//
//   npm run bench:group         BENCH_N (500), BENCH_WARMUP (20), BENCH_CONCURRENCY (8),
//                               BENCH_SECONDS (20), BENCH_MAX_CALLS (2000), BENCH_READY_S (240),
//                               BENCH_PAST_WRITES (100000)
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { DirectEndpoint } from '../domain/group';
import { groupWorkflowId, jobInstanceWorkflowId } from '../domain/ids';
import { DIRECT_SECRET_HEADER, directSecret } from '../lib/driver-secret';
import { Collections } from '../lib/mongo';
import { form, ok, request } from '../testkit/http';
import { killDrivers } from '../testkit/servers';
import { printHeader, printJson, printStats, printTarget, round, stats } from '../testkit/stats';
import { until, within } from '../testkit/wait';
import { directEndpointsQuery } from '../workflows/group';
import { printHistoryBreakdown } from './history';
import { defer, envInt, pool, runBench } from './lifecycle';
import { writePastJobs } from './past-writes';
import { startBenchStack, type BenchStack } from './stack';

const N = envInt('BENCH_N', 500);
const WARMUP = envInt('BENCH_WARMUP', 20);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 8);
const SECONDS = envInt('BENCH_SECONDS', 20);
const MAX_CALLS = envInt('BENCH_MAX_CALLS', 2000);
const READY_S = envInt('BENCH_READY_S', 240);
const SCALE = 2;
const PAST_WRITES = envInt('BENCH_PAST_WRITES', 100_000);

const JOBS_PY = `from ilum.api import IlumJob


class Noop(IlumJob):
    def run(self, spark, config):
        return 'ok'
`;

const NOOP_JAVA = `package bench;

public class Noop implements cloud.ilum.job.Job {
  public scala.Option<String> run(org.apache.spark.sql.SparkSession spark, scala.collection.immutable.Map<String, Object> config) {
    return scala.Option.apply("ok");
  }
}
`;

interface Exec {
  rtt: number;
  inRunner: number;
  overhead: number;
  jobInstanceId: string;
  /** Epoch ms (fractional) of request sent and response received. */
  sent: number;
  received: number;
}

interface Variant {
  label: string;
  jobClass: string;
  groupId: string;
}

runBench('group-execute', READY_S + 2 * SECONDS + 300, async () => {
  printHeader(
    'bench:group — execute-and-wait in warm groups (local Spark drivers, runner/runner.py), PYTHON and SCALA (JVM) job classes',
  );
  const s = await startBenchStack({ persistent: true });
  const driverDir = s.config.DRIVER_DIR;
  // Registered after the stack, so it runs before the services stop: drivers die first.
  defer('leftover local drivers', async () => {
    const n = await killDrivers(driverDir);
    if (n) console.log(`  killed ${n} leftover driver process group(s)`);
  });

  const t0 = performance.now();
  const common = {
    scale: String(SCALE),
    driverMemory: '512m',
    jobConfig: 'spark.sql.shuffle.partitions=2;spark.ui.enabled=false',
  };
  // Both groups start together: their drivers come up in parallel.
  const [python, jvm] = await Promise.all([
    createGroup(
      s,
      form(
        { name: 'bench-group', language: 'PYTHON', ...common },
        { pyFiles: [{ name: 'jobs.py', content: JOBS_PY }] },
      ),
    ),
    createGroup(
      s,
      form(
        { name: 'bench-group-jvm', language: 'SCALA', ...common },
        { jars: [{ name: 'bench.jar', content: noopJar(s) }] },
      ),
    ),
  ]);
  const variants: Variant[] = [
    { label: 'PYTHON job class (Python IlumJob)', jobClass: 'jobs.Noop', groupId: python },
    { label: 'SCALA job class (Java cloud.ilum.job.Job, through py4j)', jobClass: 'bench.Noop', groupId: jvm },
  ];
  console.log(
    `groups ${python} (PYTHON) and ${jvm} (SCALA) created (scale ${SCALE} each); waiting for ${2 * SCALE} READY instances (up to ${READY_S} s)`,
  );
  try {
    await Promise.all(variants.map((v) => waitReady(s, v, t0)));
  } catch (e) {
    printDriverLogs(driverDir);
    throw e;
  }
  const readyS = (performance.now() - t0) / 1000;
  console.log(`${2 * SCALE} instances READY ${readyS.toFixed(1)} s after the create calls`);

  const figures: Record<string, number>[] = [];
  for (const v of variants) figures.push(await measure(s, v));
  const [py, jv] = figures;
  const after: Record<string, number>[] = [];
  if (PAST_WRITES > 0) {
    const t = performance.now();
    await writePastJobs(s.store.col(Collections.jobs), 'past', 0, PAST_WRITES);
    console.log(
      `\n${PAST_WRITES} past writes of job records in ${((performance.now() - t) / 1000).toFixed(1)} s; 25 s to settle (the data file compacts once quiet)`,
    );
    await new Promise((r) => setTimeout(r, 25_000));
    for (const v of variants) after.push(await measure(s, v, ` after ${PAST_WRITES} past writes`));
    console.log(`\n## fresh stack vs after ${PAST_WRITES} past writes`);
    variants.forEach((v, i) => {
      const [f, a] = [figures[i], after[i]];
      console.log(
        `  ${v.jobClass.padEnd(10)} round trip p50 ${f.rttP50} → ${a.rttP50} ms, p99 ${f.rttP99} → ${a.rttP99} ms; ${CONCURRENCY} callers ${f.concurrentPerSecond} → ${a.concurrentPerSecond} executions/s`,
      );
    });
  }
  printJson('group-execute', {
    readySeconds: round(readyS),
    n: N,
    concurrency: CONCURRENCY,
    ...py,
    jvm: jv,
    ...(after.length ? { pastWrites: PAST_WRITES, afterPastWrites: { ...after[0], jvm: after[1] } } : {}),
  });
});

async function createGroup(s: BenchStack, body: FormData): Promise<string> {
  const { groupId } = (await ok(s.url, 'POST', '/group', body)) as { groupId: string };
  defer(
    `group ${groupId}`,
    async () => {
      // Deleting archives the group and waits until its drivers are removed.
      const r = await within(request(s.url, 'DELETE', `/group/${groupId}`), 60_000, 'DELETE /group');
      if (r.status !== 200) console.error(`! DELETE /group/${groupId}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    },
    70_000,
  );
  return groupId;
}

/** bench.Noop compiled against pyspark's jars and Ilum's job interface (made by scripts/setup.sh). */
function noopJar(s: BenchStack): Buffer {
  const dir = path.join(s.dir, 'noop-jar');
  mkdirSync(path.join(dir, 'bench'), { recursive: true });
  writeFileSync(path.join(dir, 'bench', 'Noop.java'), NOOP_JAVA);
  const cp = [
    path.join(s.config.SPARK_HOME, 'jars', '*'),
    path.join(s.config.STACK_DIR, 'jvm', 'ilum-job-api-6.0.0.jar'),
  ].join(path.delimiter);
  execFileSync('javac', ['-nowarn', '--release', '8', '-cp', cp, '-d', dir, path.join(dir, 'bench', 'Noop.java')], {
    stdio: 'pipe',
  });
  execFileSync('jar', ['cf', path.join(dir, 'bench.jar'), '-C', dir, 'bench/Noop.class']);
  return readFileSync(path.join(dir, 'bench.jar'));
}

async function waitReady(s: BenchStack, v: Variant, t0: number): Promise<void> {
  let lastStates = '';
  await until(
    `${SCALE} READY instances of ${v.groupId}`,
    async () => {
      const g = await ok(s.url, 'GET', `/group/${v.groupId}?jobStates=STARTING,READY,BUSY,FAILED,FINISHED,UNKNOWN`);
      const list = g.jobs as { jobId: string; state: string; error?: string }[];
      const states = list.map((j) => j.state).join(',');
      if (states !== lastStates) {
        console.log(
          `  ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s: ${g.language} ${states || '(no instances yet)'}`,
        );
        lastStates = states;
      }
      const failed = list.filter((j) => j.state === 'FAILED');
      if (failed.length)
        throw Object.assign(new Error(`instance ${failed[0].jobId} FAILED: ${failed[0].error}`), { fatal: true });
      return list.filter((j) => j.state === 'READY').length >= SCALE;
    },
    READY_S * 1000,
    500,
  );
}

/** Sequential, then concurrent executions of v's no-op class; prints and returns its figures. */
async function measure(s: BenchStack, v: Variant, when = ''): Promise<Record<string, number>> {
  const execute = async (): Promise<Exec> => {
    const t = performance.now();
    const r = await request(s.url, 'POST', `/group/${v.groupId}/job/execute`, {
      type: 'interactive_job_execute',
      jobClass: v.jobClass,
      jobConfig: {},
    });
    const rtt = performance.now() - t;
    if (r.status !== 200) throw new Error(`execute: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    if (r.body.error) throw new Error(`execute: the job failed: ${r.body.error.message}\n${r.body.error.stackTrace}`);
    if (r.body.result !== 'ok') throw new Error(`execute: unexpected result ${JSON.stringify(r.body.result)}`);
    const inRunner = (r.body.endTime as number) - (r.body.startTime as number);
    return {
      rtt,
      inRunner,
      overhead: rtt - inRunner,
      jobInstanceId: r.body.jobInstanceId as string,
      sent: performance.timeOrigin + t,
      received: performance.timeOrigin + t + rtt,
    };
  };

  console.log(`\n## ${v.label}: ${v.jobClass}${when}`);
  for (let i = 0; i < WARMUP; i++) await execute();

  const sequential: Exec[] = [];
  const seqStart = performance.now();
  for (let i = 0; i < N; i++) sequential.push(await execute());
  const seqS = (performance.now() - seqStart) / 1000;

  const concurrent: Exec[] = [];
  let started = 0;
  const conStart = performance.now();
  await pool(
    CONCURRENCY,
    () => started++ < MAX_CALLS && performance.now() - conStart < SECONDS * 1000,
    async () => {
      concurrent.push(await execute());
    },
  );
  const conS = (performance.now() - conStart) / 1000;

  printStats(`sequential: ${N} executions (after ${WARMUP} warm-up), ${(N / seqS).toFixed(1)} executions/s`, [
    ['overhead (RTT − in runner)', sequential.map((x) => x.overhead)],
    ['HTTP round trip', sequential.map((x) => x.rtt)],
    ['in runner (endTime − startTime)', sequential.map((x) => x.inRunner)],
  ]);
  printStats(
    `concurrent: ${concurrent.length} executions from ${CONCURRENCY} callers in ${conS.toFixed(1)} s, ${(concurrent.length / conS).toFixed(1)} executions/s (${SCALE} drivers, one execution at a time each)`,
    [
      ['HTTP round trip', concurrent.map((x) => x.rtt)],
      ['overhead (RTT − in runner)', concurrent.map((x) => x.overhead)],
    ],
  );
  console.log('');
  const o = stats(sequential.map((x) => x.overhead));
  const r = stats(sequential.map((x) => x.rtt));
  const inRunner = stats(sequential.map((x) => x.inRunner));
  const c = stats(concurrent.map((x) => x.rtt));
  const f = await floor(s, v);
  printTarget('sequential round trip p50', r.p50, '<', 8, 'ms');
  printTarget('sequential round trip p99', r.p99, '<', 30, 'ms');
  printTarget(`${CONCURRENCY} callers`, concurrent.length / conS, '>', 150, 'executions/s');
  console.log(
    `  floor (straight to the driver): p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms, ${f.perSecond.toFixed(1)} executions/s with ${CONCURRENCY} callers`,
  );

  const last = sequential[sequential.length - 1].jobInstanceId;
  if (await isDirect(s, last)) {
    console.log('  (direct path: no jobinstance workflow per execution, so no history breakdown)');
  } else
    // Where the time goes, from the job instance workflows' histories (the last 50 sequential executions).
    await printHistoryBreakdown(
      `sequential executions (${v.jobClass})`,
      s.temporal,
      sequential.slice(-50).map((x) => ({
        workflowId: jobInstanceWorkflowId(x.jobInstanceId),
        requestStart: x.sent,
        responseEnd: x.received,
      })),
    );
  return {
    overheadP50: round(o.p50),
    overheadP99: round(o.p99),
    overheadMax: round(o.max),
    rttP50: round(r.p50),
    rttP99: round(r.p99),
    inRunnerP50: round(inRunner.p50),
    inRunnerP99: round(inRunner.p99),
    concurrentPerSecond: round(concurrent.length / conS),
    concurrentP50: round(c.p50),
    concurrentP99: round(c.p99),
    floorP50: round(f.p50, 2),
    floorP99: round(f.p99, 2),
    floorPerSecond: round(f.perSecond),
  };
}

/** Whether an execution went the direct way (it has no workflow of its own). */
async function isDirect(s: BenchStack, jobInstanceId: string): Promise<boolean> {
  try {
    await s.temporal.workflow.getHandle(jobInstanceWorkflowId(jobInstanceId)).describe();
    return false;
  } catch {
    return true;
  }
}

/**
 * The floor beside the API's figures: the same execution POSTed straight to the drivers' direct channels
 * over keep-alive HTTP, N sequential to one driver, then CONCURRENCY callers over both for SECONDS / 2.
 */
async function floor(s: BenchStack, v: Variant): Promise<{ p50: number; p99: number; perSecond: number }> {
  const eps: DirectEndpoint[] = await s.temporal.workflow
    .getHandle(groupWorkflowId(v.groupId))
    .query(directEndpointsQuery);
  if (eps.length === 0) throw new Error(`group ${v.groupId} has no direct endpoints`);
  const agent = new http.Agent({ keepAlive: true });
  const body = JSON.stringify({
    jobInstanceId: 'floor',
    groupId: v.groupId,
    type: 'interactive_job_execute',
    jobClass: v.jobClass,
    jobConfig: {},
  });
  const post = (e: DirectEndpoint) =>
    new Promise<number>((resolve, reject) => {
      const t = performance.now();
      const [host, port] = e.endpoint.split(':');
      const r = http.request(
        {
          host,
          port: Number(port),
          method: 'POST',
          path: '/execute',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            [DIRECT_SECRET_HEADER]: directSecret(s.config.SECRET_KEY, e.driverId),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve(performance.now() - t) : reject(new Error(`HTTP ${res.statusCode}`)),
          );
        },
      );
      r.on('error', reject);
      r.end(body);
    });
  try {
    for (let i = 0; i < WARMUP; i++) await post(eps[0]);
    const seq: number[] = [];
    for (let i = 0; i < N; i++) seq.push(await post(eps[0]));
    let done = 0;
    let started = 0;
    const t0 = performance.now();
    await pool(
      CONCURRENCY,
      () => started++ < MAX_CALLS && performance.now() - t0 < (SECONDS * 1000) / 2,
      async () => {
        await post(eps[done++ % eps.length]);
      },
    );
    const st = stats(seq);
    return { p50: st.p50, p99: st.p99, perSecond: done / ((performance.now() - t0) / 1000) };
  } finally {
    agent.destroy();
  }
}

/** The end of each driver's log, for when instances never become READY. */
function printDriverLogs(driverDir: string): void {
  if (!existsSync(driverDir)) return;
  for (const d of readdirSync(driverDir)) {
    const f = path.join(driverDir, d, 'driver.log');
    if (!existsSync(f)) continue;
    const lines = readFileSync(f, 'utf8').trimEnd().split('\n');
    console.log(`\n--- ${d}/driver.log (last 30 of ${lines.length} lines) ---\n${lines.slice(-30).join('\n')}`);
  }
}
