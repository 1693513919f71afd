// Replay safety of the single job workflow: histories recorded from the workflow code of a baseline replay
// under today's workflows and interceptors (the bundle the test run builds as production does) without a
// determinism error, so jobs running during an upgrade go on. The baseline is the code the fixtures were last
// recorded with (`npm run record:replay`, test/integration/record-replay-fixtures.ts: a run, a retry, a stop,
// a cancel mid-launch); a change that fails here needs a patch (workflows/patches.ts).
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { jobWorkflowId } from '../../domain/ids';
import { quietTemporal } from '../../testkit/stack';

// The replay worker's state lines (INFO) would reach the log of a passing run.
quietTemporal();

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const histories = readdirSync(FIXTURES).filter((f) => /^job-history-.+\.pb$/.test(f));

describe('single job workflows recorded from the baseline code', () => {
  it('has recorded histories to replay', () => {
    expect(histories.sort()).toEqual(['cancel', 'retry', 'run', 'stop'].map((name) => `job-history-replay-${name}.pb`));
  });

  it.each(histories)('%s replays under the current bundle', async (file) => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(FIXTURES, file)));
    const id = file.replace(/^job-history-/, '').replace(/\.pb$/, '');
    // The bundle of the test run: today's workflows with today's interceptor modules (test/global-setup.ts).
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('bundlePath') } }, history, jobWorkflowId(id));
  });
});
