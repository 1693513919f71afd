// Launch at submit (api/jobs/launch-at-submit.ts): the API launches a single job's first driver right after
// starting its workflow; the workflow's own launch finds it. Real Temporal, real MongoDB, the real API; the
// cluster is a fake that behaves like Kubernetes (a removed driver is gone, and a later launch creates it
// again), which is the case where a late launch could leave an orphan.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterAdapter, DriverSpec } from '../../domain/driver';
import { singleJobDriverId } from '../../domain/job';
import { createWorker } from '../../worker/worker';
import { call, eventually, form, startHarness, type Harness } from '../harness';

/** Drivers live from their first launch until removed; a launch may be held until the test lets it go. */
function fakeCluster() {
  const live = new Set<string>();
  const created: string[] = [];
  const removed: string[] = [];
  const launchCalls: string[] = [];
  const held = new Map<string, Promise<void>>();
  const adapter: ClusterAdapter = {
    async launch(spec: DriverSpec) {
      launchCalls.push(spec.driverId);
      const gate = held.get(spec.driverId);
      held.delete(spec.driverId); // only the first call waits
      if (gate) await gate;
      if (!live.has(spec.driverId)) {
        live.add(spec.driverId);
        created.push(spec.driverId);
      }
      return { phase: 'PENDING' };
    },
    async status(id) {
      return live.has(id) ? { phase: 'SUCCEEDED', exitCode: 0, appId: `app-${id}` } : { phase: 'MISSING' };
    },
    async logs() {
      return [];
    },
    async remove(id) {
      removed.push(id);
      live.delete(id);
    },
  };
  /** The next first launch of `id` waits until the returned function is called. */
  const hold = (id: string) => {
    let release!: () => void;
    held.set(id, new Promise<void>((r) => (release = r)));
    return release;
  };
  return { adapter, live, created, removed, launchCalls, hold };
}

const fake = fakeCluster();
let s: Harness;

beforeAll(async () => {
  // No worker of the harness's own: the test starts one when the API's part is done.
  s = await startHarness({
    worker: false,
    env: { WATCH_INTERVAL_MS: '100', LAUNCH_AT_SUBMIT: 'all' },
    adapterFor: async () => fake.adapter,
  });
});
afterAll(async () => s?.stop());

async function withWorker<T>(fn: () => Promise<T>): Promise<T> {
  const w = await createWorker(s.config, s.store, { adapterFor: async () => fake.adapter });
  const running = w.run();
  try {
    return await fn();
  } finally {
    w.worker.shutdown();
    await running.catch(() => undefined);
  }
}

const submit = async () => {
  const r = await call(
    s,
    'POST',
    '/job/submit',
    form(
      { name: 'early', language: 'PYTHON', jobClass: 'main' },
      { pyFiles: [{ name: 'main.py', content: 'print(1)' }] },
    ),
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.jobId as string;
};
const stateOf = async (id: string) => (await call(s, 'GET', `/job/${id}`)).body.state as string;

describe('launch at submit', () => {
  it('starts the driver before any worker runs; the workflow finds it and the job ends with that one driver', async () => {
    const id = await submit();
    const driverId = singleJobDriverId(id, 1);
    // Nothing polls the task queue yet: only the API can have launched it.
    await eventually(async () => fake.created.includes(driverId), 10_000, 20);
    expect(await stateOf(id)).toBe('SUBMITTED');

    await withWorker(() => eventually(async () => ((await stateOf(id)) === 'FINISHED' ? true : undefined), 30_000));
    expect(fake.launchCalls.filter((d) => d === driverId).length).toBe(2); // the API's and the workflow's
    expect(fake.created.filter((d) => d === driverId)).toEqual([driverId]);
    await eventually(async () => !fake.live.has(driverId), 10_000, 20);
  });

  it('a cancel that overtakes the launch leaves no driver: the API removes what its late launch created', async () => {
    // The id is only known after the answer, so the hold goes on every driver of the next submission.
    const before = fake.launchCalls.length;
    const releases: (() => void)[] = [];
    const origLaunch = fake.adapter.launch.bind(fake.adapter);
    let first = true;
    fake.adapter.launch = async (spec) => {
      if (first) {
        first = false;
        releases.push(fake.hold(spec.driverId));
      }
      return origLaunch(spec);
    };
    try {
      const id = await submit();
      const driverId = singleJobDriverId(id, 1);
      expect(fake.launchCalls.length).toBe(before + 1); // the API's launch, held
      const cancel = await call(s, 'POST', `/job/${id}/cancel`);
      expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);

      await withWorker(async () => {
        await eventually(async () => ((await stateOf(id)) === 'CANCELED' ? true : undefined), 30_000);
        // The workflow has removed the driver (whether or not its own launch created it first)...
        await eventually(async () => fake.removed.includes(driverId), 10_000, 20);
      });
      expect(fake.live.has(driverId)).toBe(false);

      // ...and now the API's launch goes through, creating the driver after its removal.
      releases[0]();
      await eventually(async () => fake.created.includes(driverId), 10_000, 20);
      await eventually(async () => !fake.live.has(driverId), 10_000, 20);
      expect(fake.removed.filter((d) => d === driverId).length).toBeGreaterThanOrEqual(2);
    } finally {
      fake.adapter.launch = origLaunch;
    }
  });
});
