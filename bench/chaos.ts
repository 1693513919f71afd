// `npm run chaos`: fault injection on loopback. Starts its own supervised stack (scripts/stack.ts on free
// ports, data in a temp folder), keeps a mixed load going (a PySpark job per fault, a schedule every
// minute, an asynchronous execution on a scale-2 group every 2 s, an SQL statement every second) and kill -9s the worker, the API, the Temporal dev server and the MongoDB-protocol server in
// turn, CHAOS_ROUNDS times, while a job is BUSY. Prints lost / duplicated / out-of-order / 5xx counts,
// which must all be 0 (exit code 1 otherwise). Bounded: CHAOS_ROUNDS (1) × 4 faults, each job
// CHAOS_JOB_SECONDS (30) long, and the hard limit BENCH_TIMEOUT_S. CHAOS_VICTIMS narrows the faults
// (e.g. worker,api). The short form runs in CI as test/e2e/chaos.test.ts. `--scale` runs the scale-out faults
// instead (two worker hosts, three workers, two APIs: bench/chaos-scale.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { printHeader, printJson } from '../testkit/stats';
import { runChaos } from './chaos-run';
import { scaleChaosMain } from './chaos-scale';
import { startChaosStack, VICTIMS, type Victim } from './chaos-stack';
import { defer, envInt, runBench } from './lifecycle';

const ROUNDS = envInt('CHAOS_ROUNDS', 1);
const JOB_SECONDS = envInt('CHAOS_JOB_SECONDS', 30);
const victims = (process.env.CHAOS_VICTIMS ?? VICTIMS.join(',')).split(',').map((v) => v.trim()) as Victim[];

// `npm run chaos -- --scale`: the scale-out run instead (bench/chaos-scale.ts).
if (process.argv.includes('--scale')) runBench('chaos-scale', 1800, scaleChaosMain);
else
  runBench('chaos', 300 + ROUNDS * victims.length * 300, async () => {
    printHeader(`chaos — kill -9 of ${victims.join(', ')} while a PySpark job is BUSY, ${ROUNDS} round(s)`);
    for (const v of victims) if (!VICTIMS.includes(v)) throw new Error(`CHAOS_VICTIMS: unknown '${v}' (${VICTIMS})`);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-chaos-'));
    if (!process.env.KEEP_BENCH_DIR) defer('temp folder', () => rmSync(dir, { recursive: true, force: true }));
    const stack = await startChaosStack(dir);
    defer('stack', () => stack.stop(), 60_000);
    const report = await runChaos(stack, {
      victims: Array.from({ length: ROUNDS }, () => victims).flat(),
      jobSeconds: JOB_SECONDS,
      schedule: true,
      groups: { everyMs: 2000 },
      sql: { everyMs: 1000 },
      jobTimeoutMs: 300_000,
      log: (line) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`),
    });
    console.log(`
  jobs checked   ${report.jobs.length} (${report.jobs.filter((j) => j.victim !== 'schedule').length} under a fault, the rest schedule runs)
  statements     ${report.statements ? `${report.statements.sent} sent, ${report.statements.ok} right, ${report.statements.failedClearly} failed with a message` : '-'}
  executions     ${report.executions ? `${report.executions.submitted} submitted, ${report.executions.succeeded} ok, ${report.executions.failedClearly} failed with a message` : '-'}
  lost           ${report.lost}
  duplicated     ${report.duplicated}
  out of order   ${report.outOfOrder}
  5xx            ${report.http5xx}   (plus ${report.http503} × 503 "try again" while a server was down)
  restarts       ${JSON.stringify(report.restarts)}
  ${report.lost + report.duplicated + report.outOfOrder + report.http5xx === 0 ? 'PASS' : 'FAIL'}`);
    printJson('chaos', { ...report, jobs: undefined });
    if (report.lost + report.duplicated + report.outOfOrder + report.http5xx > 0)
      throw new Error('jobs were lost or doubled, or a request answered 5xx (see above)');
  });
