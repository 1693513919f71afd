// Trino engines on the local adapter, for real (installed by scripts/setup.sh): launched, probed until it
// answers, and removed with every process it started. The SPARK_SQL engine (Spark's Thrift Server) is a case of
// the adapter contract (testkit/adapter-contract.ts), which local-adapter.test.ts runs with the local checks.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { probeEngine } from '../../activities/adapters/engine-probe';
import { createLocalAdapter, type LocalAdapterConfig } from '../../activities/adapters/local/adapter';
import { DRIVER_FILES } from '../../activities/adapters/local/driver-files';
import { TRINO_DIRS } from '../../activities/adapters/local/sql-engine';
import { isFinalPhase, type ClusterAdapter, type DriverSpec } from '../../domain/driver';
import { sqlEngineDriverId } from '../../domain/sql-engine';
import { loadConfig } from '../../lib/config';
import { groupMembers, noneRunning } from '../../testkit/proc-groups';
import { eventually } from '../../testkit/wait';
import { sparkSpec } from '../../testkit/spark-spec';

const TRINO_HOME = loadConfig().TRINO_HOME;
const trinoInstalled = existsSync(path.join(TRINO_HOME, 'bin', 'launcher.py'));
const STATE_KEY = 'e2e';

let tmp: string;
let config: LocalAdapterConfig;
let adapter: ClusterAdapter;
const launched = new Set<string>();

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'sql-engine-adapter-'));
  const base = loadConfig();
  config = {
    SPARK_HOME: base.SPARK_HOME,
    PYTHON: base.PYTHON,
    DRIVER_DIR: path.join(tmp, 'drivers'),
    STACK_DIR: path.join(tmp, 'stack'),
    LOCAL_SPARK_THREADS: 2,
    TRINO_HOME,
  };
  adapter = createLocalAdapter(config);
});

afterAll(async () => {
  // Whatever a failed assertion left running must not outlive the test run.
  if (adapter) for (const id of launched) await adapter.remove(id);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const spec = (): DriverSpec => {
  const type = 'TRINO';
  const driverId = sqlEngineDriverId('e2e', type, 1);
  launched.add(driverId);
  return {
    driverId,
    role: 'sql-engine',
    engine: { type, stateKey: STATE_KEY },
    env: {},
    labels: {},
    spark: sparkSpec({
      name: `e2e ${type}`,
      language: 'SCALA',
      clusterName: 'default',
      memorySettings: { dynamicAllocation: false, driverMemory: '512m' },
    }),
  };
};

/** What Trino leaves in its driver folder (besides the wrapper's files), and nothing else. */
const FOLDER = [TRINO_DIRS.etc.split('/')[0]];

async function launchProbeRemove(expect: ExpectStatic): Promise<void> {
  const type = 'TRINO';
  const s = spec();
  const dir = path.join(config.DRIVER_DIR, s.driverId);
  const t0 = Date.now();
  const first = await adapter.launch(s);
  expect(first).toMatchObject({ phase: 'RUNNING', endpoint: { host: '127.0.0.1', port: expect.any(Number) } });
  const endpoint = first.endpoint!;
  // A retried launch finds the engine: same process, same port.
  const pid = Number(readFileSync(path.join(dir, DRIVER_FILES.pid), 'utf8'));
  expect((await adapter.launch(s)).endpoint).toEqual(endpoint);
  expect(Number(readFileSync(path.join(dir, DRIVER_FILES.pid), 'utf8'))).toBe(pid);

  await eventually(
    async () => {
      const st = await adapter.status(s.driverId);
      if (isFinalPhase(st.phase))
        throw Object.assign(new Error(`${type} engine ended: ${st.message}`), { fatal: true });
      return probeEngine(type, endpoint, 2_000);
    },
    170_000,
    250,
  );
  console.log(`${type} engine answered ${Date.now() - t0} ms after launch`);
  expect(await adapter.status(s.driverId)).toMatchObject({ phase: 'RUNNING', endpoint });
  const [entry] = await adapter.logs(s.driverId, { from: 0, size: 100_000 });
  expect(entry).toMatchObject({ name: s.driverId, role: 'driver', state: 'RUNNING' });
  await eventually(async () => {
    const [e] = await adapter.logs(s.driverId, { from: 0, size: 100_000 });
    return e.log.some((l) => l.includes('SERVER STARTED'));
  }, 10_000);

  // Nothing outside its folder.
  const wrapperFiles = [DRIVER_FILES.command, DRIVER_FILES.pid, DRIVER_FILES.log, DRIVER_FILES.endpoint];
  expect(readdirSync(dir).sort()).toEqual([...wrapperFiles, ...FOLDER].sort());

  const group = groupMembers(pid);
  expect(group.length).toBeGreaterThanOrEqual(2); // the wrapper and the JVM
  await adapter.remove(s.driverId);
  // Every process it started has ended, and none started since is left (a zombie has ended: PID 1 reaps it late).
  await noneRunning(group, pid, 10_000);
  expect(await probeEngine(type, endpoint, 1_000)).toBe(false);
  const removed = await adapter.status(s.driverId);
  expect(removed).toMatchObject({ phase: 'FAILED', message: 'removed' });
  expect(removed.endpoint).toBeUndefined();
}

describe('local adapter: SQL engines for real', () => {
  it.skipIf(!trinoInstalled)('TRINO: Trino answers at its endpoint, and is gone after remove', async ({ expect }) => {
    const installed = readdirSync(TRINO_HOME).sort();
    await launchProbeRemove(expect);
    // Runs from the shared install without writing into it.
    expect(readdirSync(TRINO_HOME).sort()).toEqual(installed);
  });
});
