// The short fault matrix on real processes: the supervised dev stack (scripts/stack.ts) with real Temporal,
// MongoDB-protocol server, worker, API and Spark; kill -9 of each of the worker, the API, the Temporal dev
// server and the MongoDB-protocol server once while a PySpark job is BUSY. Each job must finish once
// (attempt 1, one driver started, its stream's states in order), with no 5xx answered; asynchronous
// executions on a scale-2 group go on meanwhile, and each ends once, with a result or a clear error. `npm run chaos` is
// the longer form (more rounds, a schedule).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChaos, statesInOrder } from '../../bench/chaos-run';
import { startChaosStack, VICTIMS, type ChaosStack } from '../../bench/chaos-stack';

let stack: ChaosStack | undefined;
const dir = mkdtempSync(path.join(os.tmpdir(), 'spark-chaos-test-'));

beforeAll(async () => {
  stack = await startChaosStack(dir);
}, 300_000);
afterAll(async () => {
  await stack?.stop();
  if (!process.env.KEEP_TEST_STACK) rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe('a crash of any one process loses and doubles nothing', () => {
  it('checks stream order strictly forward', () => {
    expect(statesInOrder(['SUBMITTED', 'STARTING', 'BUSY', 'UNKNOWN', 'BUSY', 'FINISHED'])).toBe(true);
    expect(statesInOrder(['SUBMITTED', 'BUSY', 'STARTING', 'FINISHED'])).toBe(false);
  });

  it('finishes every job once while worker, API, Temporal and MongoDB are each killed -9', async () => {
    const report = await runChaos(stack!, {
      victims: [...VICTIMS],
      jobSeconds: 12,
      schedule: false,
      groups: { everyMs: 3000 },
      jobTimeoutMs: 240_000,
      log: (line) => console.log(line),
    });
    for (const j of report.jobs) {
      expect(j, `job under a crash of ${j.victim}`).toMatchObject({
        state: 'FINISHED',
        attempt: 1,
        drivers: 1,
        sparkStarts: 1,
        inOrder: true,
      });
      expect(j.states[0]).toBe('SUBMITTED');
      expect(j.states.at(-1)).toBe('FINISHED');
    }
    expect(report).toMatchObject({ lost: 0, duplicated: 0, outOfOrder: 0, http5xx: 0 });
    // Group executions through every fault: each has a result or an error that says why, none ran twice.
    expect(report.executions).toMatchObject({ lost: 0, duplicated: 0 });
    expect(report.executions!.submitted).toBeGreaterThan(10);
    expect(report.executions!.succeeded).toBeGreaterThan(report.executions!.submitted / 2);
    // Each killed process came back, and only it.
    expect(report.restarts).toEqual({ worker: 1, api: 1, temporal: 1, mongo: 1 });
  }, 1_500_000);
});
