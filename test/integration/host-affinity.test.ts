// Host affinity (domain/hosts.ts): two worker hosts on one task queue, each with a host-bound cluster adapter
// that knows only the drivers it launched itself, as a local cluster's driver folders are on one host only.
// Real Temporal, real MongoDB, the real API and workers. Every call on a driver must reach the host that
// launched it (a status asked on the other host would answer MISSING and fail the job); a host whose workers
// are gone leaves its jobs UNKNOWN with that cause, and they go on when it is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterAdapter, DriverSpec, DriverStatus } from '../../domain/driver';
import type { ServiceWorker } from '../../worker/worker';
import { createWorker } from '../../worker/worker';
import { call, eventually, form, startHarness, type Harness } from '../harness';

/** A host's drivers: each runs `runMs` from its launch, then succeeds. Calls on drivers it never launched are noted. */
function hostCluster(host: string, run: { ms: number }) {
  const drivers = new Map<string, number>();
  const foreign: string[] = [];
  const removed = new Set<string>();
  // A driver this host removed may still be asked about (a watch ending as its group goes): that is its own.
  const known = (id: string, what: string) => {
    if (!drivers.has(id) && !removed.has(id)) foreign.push(`${what} ${id}`);
    return drivers.get(id);
  };
  const status = (started: number | undefined): DriverStatus =>
    started === undefined
      ? { phase: 'MISSING' }
      : Date.now() - started < run.ms
        ? { phase: 'RUNNING', appId: `app-${host}` }
        : { phase: 'SUCCEEDED', exitCode: 0, appId: `app-${host}` };
  const adapter: ClusterAdapter = {
    hostBound: true,
    async launch(spec: DriverSpec) {
      if (!drivers.has(spec.driverId)) drivers.set(spec.driverId, Date.now());
      return status(drivers.get(spec.driverId));
    },
    async status(id) {
      return status(known(id, 'status'));
    },
    async logs(id) {
      known(id, 'logs');
      const log = [`driver ${id} on ${host}`];
      return [
        { name: id, type: 'driver', role: 'driver', state: 'RUNNING', from: 0, logSize: 1, fileName: 'log', log },
      ];
    },
    async remove(id) {
      // Removing twice is fine; removing what another host launched is the mistake.
      if (drivers.get(id) === undefined && !removed.has(id)) foreign.push(`remove ${id}`);
      drivers.delete(id);
      removed.add(id);
    },
  };
  return { adapter, drivers, foreign, removed };
}

/** How long drivers run: short at first; the second case needs one that outlives its host's absence. */
const run = { ms: 4_000 };
const hosts = { 'host-a': hostCluster('host-a', run), 'host-b': hostCluster('host-b', run) };
type HostId = keyof typeof hosts;
let s: Harness;
const workers = new Map<HostId, { w: ServiceWorker; running: Promise<void> }>();

async function startHostWorker(host: HostId): Promise<void> {
  const config = { ...s.config, WORKER_HOST: host };
  const w = await createWorker(config, s.store, { adapterFor: async () => hosts[host].adapter });
  const running = w.run();
  running.catch(() => undefined);
  workers.set(host, { w, running });
}

async function stopHostWorker(host: HostId): Promise<void> {
  const h = workers.get(host);
  workers.delete(host);
  if (!h) return;
  if (h.w.worker.getState() === 'RUNNING') h.w.worker.shutdown();
  await h.running.catch(() => undefined);
}

beforeAll(async () => {
  s = await startHarness({
    worker: false,
    // A host that takes no task for 1 s counts as gone (the smallest HOST_ABSENT_MS).
    env: { WATCH_INTERVAL_MS: '100', HOST_ABSENT_MS: '1000', LAUNCH_AT_SUBMIT: 'off' },
    adapterFor: async () => hosts['host-a'].adapter,
  });
  await Promise.all([startHostWorker('host-a'), startHostWorker('host-b')]);
}, 120_000);
afterAll(async () => {
  await Promise.all([...workers.keys()].map(stopHostWorker));
  await s?.stop();
});

const submit = async (name: string) => {
  const r = await call(
    s,
    'POST',
    '/job/submit',
    form({ name, language: 'PYTHON', jobClass: 'main' }, { pyFiles: [{ name: 'main.py', content: 'print(1)' }] }),
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.jobId as string;
};
const jobOf = async (id: string) => (await call(s, 'GET', `/job/${id}`)).body as Record<string, unknown>;

describe('host affinity of host-bound drivers', () => {
  it('jobs launched on either host are watched, read and removed on that host only, and finish', async () => {
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(`affine-${i}`)));
    const placed = await eventually(async () => {
      const jobs = await Promise.all(ids.map(jobOf));
      return jobs.every((j) => j.host) ? jobs : undefined;
    }, 30_000);
    for (const j of placed) expect(Object.keys(hosts)).toContain(j.host);
    expect(new Set(placed.map((j) => j.host)).size, 'both hosts launch').toBe(2);

    // Logs come from the host that owns the driver.
    for (const j of placed) {
      const logs = await call(s, 'GET', `/job/${j.jobId as string}/logs`);
      expect(logs.status).toBe(200);
      expect(JSON.stringify(logs.body)).toContain(`on ${j.host as string}`);
    }
    const ended = await eventually(async () => {
      const jobs = await Promise.all(ids.map(jobOf));
      return jobs.every((j) => j.state === 'FINISHED' || j.state === 'FAILED') ? jobs : undefined;
    }, 60_000);
    expect(ended.map((j) => j.state)).toEqual(ids.map(() => 'FINISHED'));
    await eventually(
      async () =>
        ids.every(
          (id) => ![...hosts['host-a'].drivers.keys(), ...hosts['host-b'].drivers.keys()].some((d) => d.includes(id)),
        ),
      20_000,
    );
    expect(hosts['host-a'].foreign).toEqual([]);
    expect(hosts['host-b'].foreign).toEqual([]);
  }, 120_000);

  it("a group's instances are watched and removed on the host that launched each", async () => {
    // Runners never signal READY here (no Spark): the instances stay STARTING, their drivers running.
    run.ms = 600_000;
    const created = await call(
      s,
      'POST',
      '/group',
      form(
        { name: `affine-group-${Date.now()}`, language: 'PYTHON', scale: '4' },
        { pyFiles: [{ name: 'jobs.py', content: 'x = 1' }] },
      ),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const groupId = created.body.groupId as string;
    const instances = await eventually(async () => {
      const jobs = ((await call(s, 'GET', `/group/${groupId}`)).body.jobs ?? []) as Record<string, unknown>[];
      return jobs.length === 4 && jobs.every((j) => j.host) ? jobs : undefined;
    }, 30_000);
    const driverIds = instances.map((j) => `inst-${j.jobId as string}`);
    // Each instance's driver is on the host its record names, and only there.
    for (const [i, j] of instances.entries()) {
      const host = j.host as HostId;
      expect(hosts[host].drivers.has(driverIds[i])).toBe(true);
      expect(hosts[host === 'host-a' ? 'host-b' : 'host-a'].drivers.has(driverIds[i])).toBe(false);
    }
    expect((await call(s, 'DELETE', `/group/${groupId}`)).status).toBe(200);
    await eventually(
      async () =>
        driverIds.every((d) => !hosts['host-a'].drivers.has(d) && !hosts['host-b'].drivers.has(d)) ? true : undefined,
      30_000,
    );
    expect(hosts['host-a'].foreign).toEqual([]);
    expect(hosts['host-b'].foreign).toEqual([]);
  }, 120_000);

  it('a host whose workers are gone leaves its job UNKNOWN with that cause; back, the job finishes', async () => {
    run.ms = 15_000;
    // Submit until one lands on host-b (any worker may take a launch).
    let onB: string | undefined;
    for (let i = 0; !onB && i < 10; i++) {
      const id = await submit(`gone-${i}`);
      const j = await eventually(async () => {
        const r = await jobOf(id);
        return r.host ? r : undefined;
      }, 20_000);
      if (j.host === 'host-b') onB = id;
    }
    expect(onB, 'a job on host-b').toBeDefined();
    const id = onB!;
    await stopHostWorker('host-b');
    const unknown = await eventually(async () => {
      const j = await jobOf(id);
      return j.state === 'UNKNOWN' ? j : undefined;
    }, 60_000);
    expect(unknown.error).toContain("worker host 'host-b' is not answering");
    // Meanwhile host-a's workers take every new launch and never touch host-b's driver.
    run.ms = 1_000;
    const other = await submit('meanwhile');
    await eventually(async () => ((await jobOf(other)).state === 'FINISHED' ? true : undefined), 30_000);
    expect((await jobOf(other)).host).toBe('host-a');
    // The logs of a job on a gone host: 503 with the cause, not a guess from another host.
    const logs = await call(s, 'GET', `/job/${id}/logs`);
    expect(logs.status).toBe(503);
    expect(String(logs.body.message)).toContain('host-b');
    expect((await jobOf(id)).state).toBe('UNKNOWN');

    await startHostWorker('host-b');
    const done = await eventually(async () => {
      const j = await jobOf(id);
      return j.state === 'FINISHED' || j.state === 'FAILED' ? j : undefined;
    }, 60_000);
    expect(done.state).toBe('FINISHED');
    expect(done.host).toBe('host-b');
    expect(hosts['host-a'].foreign).toEqual([]);
    expect(hosts['host-b'].foreign).toEqual([]);
  }, 180_000);
});
