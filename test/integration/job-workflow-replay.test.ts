// Replay safety of the single job workflow: histories recorded by the code before the FEWER_STEPS changes (with the
// OpenTelemetry interceptors compiled into the bundle, as deployed then) replay under today's workflows and
// interceptors without a determinism error, so jobs running during an upgrade go on. The fixtures were made by
// running the older code against a dev server (a whole run with a failed try, a cancel mid-launch, a stop),
// exporting each history with `temporal workflow show --output json` and encoding it as the History protobuf
// (the SDK's own JSON reader trips over its two copies of protobufjs in this install).
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { jobWorkflowId } from '../../domain/ids';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const histories = readdirSync(FIXTURES).filter((f) => /^job-history-.+\.pb$/.test(f));

describe('single job workflows started by the older code', () => {
  it('has recorded histories to replay', () => {
    expect(histories).toEqual(
      expect.arrayContaining([
        'job-history-replay-run.pb',
        'job-history-replay-cancel.pb',
        'job-history-replay-stop.pb',
        // Recorded by the code of the patch fewer-steps-per-task, before finish-in-watch (the watch wrote BUSY,
        // the workflow FINISHED): fake activities, a driver PENDING → RUNNING → SUCCEEDED.
        'job-history-replay-lean-run.pb',
        // The same code, a driver RUNNING at its launch: the BUSY job was watched with the plain watch activity,
        // which the code since finish-in-watch replaces (so this one fails if that patch is bypassed).
        'job-history-replay-lean-running.pb',
      ]),
    );
  });

  it.each(histories)('%s replays under the current bundle', async (file) => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(FIXTURES, file)));
    const id = file.replace(/^job-history-/, '').replace(/\.pb$/, '');
    // The bundle of the test run: today's workflows with today's interceptor modules (test/global-setup.ts).
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('bundlePath') } }, history, jobWorkflowId(id));
  });
});
