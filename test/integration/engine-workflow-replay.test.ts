// Replay safety of the SQL engine and Spark Connect server workflows (one state machine, workflows/engine-entity.ts):
// histories recorded from the baseline code (`npm run record:replay -- sqlengine connectserver`,
// record-replay-fixtures.ts: an idle stop, a dead driver restarted then a stop, a start timeout then an ensure
// then a cancel) replay under today's bundle without a determinism error, so engines and servers running during an
// upgrade go on. A change that fails here needs a patch (workflows/patches.ts).
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { quietTemporal } from '../../testkit/stack';

// The replay worker's state lines (INFO) would reach the log of a passing run.
quietTemporal();

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const KINDS = ['sqlengine', 'connectserver'];
const SCENARIOS = ['failed', 'life', 'restart'];
const histories = readdirSync(FIXTURES).filter((f) => /^(sqlengine|connectserver)-history-.+\.pb$/.test(f));

describe('SQL engine and Connect server workflows recorded from the baseline code', () => {
  it('has recorded histories to replay', () => {
    expect(histories.sort()).toEqual(
      KINDS.sort().flatMap((kind) => SCENARIOS.map((name) => `${kind}-history-replay-${name}.pb`)),
    );
  });

  it.each(histories)('%s replays under the current bundle', async (file) => {
    const history = temporal.api.history.v1.History.decode(readFileSync(path.join(FIXTURES, file)));
    const started = history.events[0]?.workflowExecutionStartedEventAttributes;
    // The recorded workflow type: the registered name the worker must still answer to.
    expect(started?.workflowType?.name).toBe(
      file.startsWith('sqlengine') ? 'sqlEngineWorkflow' : 'connectServerWorkflow',
    );
    // No local activity (their results can reach the workflow in another task live than on replay:
    // workflows/activity-options.ts, entityProjection).
    expect(history.events.filter((e) => e.markerRecordedEventAttributes).length).toBe(0);
    // The bundle of the test run: today's workflows with today's interceptor modules (test/global-setup.ts).
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('bundlePath') } }, history, file);
  });
});
