// Starts the real Temporal dev server and mongo-java-server once per vitest run, and builds the workflow
// bundle once. The integration and e2e projects both name this file; vitest runs it once per project, so
// the first call starts everything and the last teardown stops it (state kept on globalThis, which the
// projects share: they run in the same main process). Files get the addresses through vitest's inject().
import { bundleWorkflowCode } from '@temporalio/worker';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ROOT } from '../lib/config';
import { buildConsole } from '../scripts/build-console.mjs';
import { stopSharedControlPlane } from '../testkit/kube/shared';
import { killDrivers, startServers } from '../testkit/servers';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../worker/worker';

interface Shared {
  temporalAddress: string;
  mongoUrl: string;
  bundlePath: string;
  testDir: string;
  consoleDir: string;
  stop(): Promise<void>;
}
const KEY = Symbol.for('spark-orchestrator.test-servers');
type Holder = { started?: Promise<Shared>; users: number };
const holder = ((globalThis as Record<symbol, Holder>)[KEY] ??= { users: 0 });

// Spark JVMs of the tests start lighter (test/spark-conf/spark-defaults.conf says how and why). Set before any
// test process or server starts, so each inherits it; scripts/test.sh sets it for the runner's pytest too.
process.env.SPARK_CONF_DIR ??= path.join(ROOT, 'test', 'spark-conf');

async function start(): Promise<Shared> {
  // One folder per run, so concurrent runs (several developers' shells) do not trample each other.
  const dir = path.join(ROOT, '.vitest-stack', `run-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // The web console, built from the sources as `npm run build` does; every harness's API serves it.
  const consoleDir = path.join(dir, 'console');
  const [servers, bundle] = await Promise.all([
    startServers({
      dir,
      persistent: true,
      // Temporal suggests continue-as-new after 4,000 events by default; the tests' group workflows
      // reach this after a few dozen executions, so the continue-as-new path runs in every test run.
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 120 },
    }),
    bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
    }),
    buildConsole(consoleDir),
  ]);
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  return {
    temporalAddress: servers.temporalAddress,
    mongoUrl: servers.mongoUrl,
    bundlePath,
    testDir: dir,
    consoleDir,
    async stop() {
      // Drivers (Spark JVMs and runners) of every harness of the run.
      for (const h of existsSync(dir) ? readdirSync(dir) : []) await killDrivers(path.join(dir, h, 'drivers'));
      // The real Kubernetes control plane, when a k8s test file started one (testkit/kube/shared.ts).
      await stopSharedControlPlane(dir);
      await servers.stop();
      // Drivers, logs and data of a run are kept for a look after a failure only when asked.
      if (!process.env.KEEP_TEST_STACK) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export default async function setup(project: TestProject) {
  holder.users++;
  const shared = await (holder.started ??= start());
  project.provide('temporalAddress', shared.temporalAddress);
  project.provide('mongoUrl', shared.mongoUrl);
  project.provide('bundlePath', shared.bundlePath);
  project.provide('testDir', shared.testDir);
  project.provide('consoleDir', shared.consoleDir);
  return async () => {
    if (--holder.users > 0) return;
    holder.started = undefined;
    await shared.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    mongoUrl: string;
    bundlePath: string;
    testDir: string;
    consoleDir: string;
  }
}
