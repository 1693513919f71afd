// Starts the real Temporal dev server and mongo-java-server once for all end-to-end files, and builds
// the workflow bundle once. Files get the addresses through vitest's inject().
import { bundleWorkflowCode } from '@temporalio/worker';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ROOT } from '../lib/config';
import { killDrivers, startServices, type Services } from '../scripts/services';
import { WORKFLOWS_PATH } from '../worker/worker';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

let services: Services | undefined;

export default async function setup(project: TestProject) {
  // One folder per run, so concurrent runs (several developers' shells) do not trample each other.
  const dir = path.join(ROOT, '.vitest-stack', `run-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const [temporalPort, temporalUiPort, mongoPort] = [await freePort(), await freePort(), await freePort()];
  const [svc, bundle] = await Promise.all([
    startServices({
      stackDir: process.env.STACK_DIR ?? path.join(ROOT, '.stack'),
      dataDir: path.join(dir, 'data'),
      logDir: path.join(dir, 'logs'),
      temporalPort,
      temporalUiPort,
      mongoPort,
      persistent: true,
      headless: true,
      // Temporal suggests continue-as-new after 4,000 events by default; the tests' group workflows
      // reach this after a few dozen executions, so the continue-as-new path runs in every test run.
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 120 },
    }),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } }),
  ]);
  services = svc;
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  project.provide('temporalAddress', svc.temporalAddress);
  project.provide('mongoUrl', svc.mongoUrl);
  project.provide('bundlePath', bundlePath);
  project.provide('testDir', dir);
  return async () => {
    // Drivers (Spark JVMs and runners) of every harness of the run.
    for (const h of existsSync(dir) ? readdirSync(dir) : []) await killDrivers(path.join(dir, h, 'drivers'));
    await services?.stop();
    // Drivers, logs and data of a run are kept for a look after a failure only when asked.
    if (!process.env.KEEP_TEST_STACK) rmSync(dir, { recursive: true, force: true });
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    mongoUrl: string;
    bundlePath: string;
    testDir: string;
  }
}
