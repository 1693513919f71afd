// Schedules end to end: HTTP API → schedule keeper workflow → Temporal Schedule → ordinary job workflows
// running real spark-submit on the local cluster.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { holdPorts, startServers } from '../../testkit/servers';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const APP = { pyFiles: [{ name: 'tick.py', content: 'import sys\nprint("TICK", sys.argv[1:])\n' }] };
type Job = { jobId: string; state: string; scheduleId: string; submitTime: number; jobConfig: string };

/** Temporal appends the tick's nominal time to a scheduled run's id. */
const nominal = (jobId: string) => Date.parse(jobId.slice(-20));

async function scheduleJobs(h: Harness, scheduleId: string): Promise<Job[]> {
  const docs = await h.store.col('jobs').find({ scheduleId }).sort({ submitTime: 1 }).toArray();
  return docs as unknown as Job[];
}

// Every case waits on ticks of its own schedule (its own name and id, its own jobs), so the cases run
// concurrently: the file takes about as long as its longest case (the restarts) instead of their sum.
// Concurrent cases take `expect` from their context, so a failure is told against the right case.
describe.concurrent('schedules', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('fires jobs carrying its scheduleId, applies updates from the next run, pauses, resumes and disables', async ({
    expect,
  }) => {
    const r = await call(
      h,
      'POST',
      '/schedule',
      form(
        {
          name: 'every-5s',
          cron: '@every 5s',
          language: 'PYTHON',
          jobClass: 'tick',
          args: 'a;b',
          tags: 'team=etl',
          jobConfig: 'spark.marker=v1',
        },
        APP,
      ),
    );
    expect(r.status).toBe(200);
    const id = r.body.scheduleId;
    const s = (await call(h, 'GET', `/schedule/${id}`)).body;
    expect(s).toMatchObject({
      id,
      name: 'every-5s',
      cron: '@every 5s',
      state: 'ENABLED',
      jobClass: 'tick',
      args: ['a', 'b'],
      maxRetries: 0,
      language: 'PYTHON',
      tags: 'team=etl',
    });
    expect((await call(h, 'GET', '/schedule/name/every-5s')).body.id).toBe(id);

    const first = await eventually(
      async () => {
        const jobs = await scheduleJobs(h, id);
        return jobs.find((j) => j.state === 'FINISHED');
      },
      120_000,
      500,
    );
    expect(first).toMatchObject({ scheduleId: id, jobConfig: 'spark.marker=v1' });
    expect(first.jobId).toMatch(new RegExp(`^sched-${id}-\\d{4}-\\d\\d-\\d\\dT`));
    const logs = await call(h, 'GET', `/job/${encodeURIComponent(first.jobId)}/logs`);
    expect(logs.body.flatMap((e: { log: string[] }) => e.log).join('\n')).toContain("TICK ['a', 'b']");
    expect((await call(h, 'GET', `/schedule/${id}`)).body.jobs.map((j: Job) => j.jobId)).toContain(first.jobId);

    // An update applies from the next run on.
    const updatedAt = Date.now();
    expect(
      (await call(h, 'PUT', `/schedule/${id}`, form({ jobConfig: 'spark.marker=v2', description: 'changed' }))).status,
    ).toBe(200);
    expect((await call(h, 'GET', `/schedule/${id}`)).body).toMatchObject({
      description: 'changed',
      jobConfig: { 'spark.marker': 'v2' },
    });
    const next = await eventually(
      async () => (await scheduleJobs(h, id)).find((j) => nominal(j.jobId) > updatedAt + 100),
      60_000,
      500,
    );
    expect(next.jobConfig).toBe('spark.marker=v2');

    // Pause: no tick after it; resume: ticks again.
    expect((await call(h, 'POST', `/schedule/${id}/pause`)).status).toBe(200);
    const pausedAt = Date.now();
    expect((await call(h, 'GET', `/schedule/${id}`)).body.state).toBe('PAUSED');
    expect((await call(h, 'POST', `/schedule/${id}/pause`)).status).toBe(409);
    await new Promise((res) => setTimeout(res, 12_000));
    expect((await scheduleJobs(h, id)).filter((j) => nominal(j.jobId) > pausedAt + 100)).toEqual([]);
    expect((await call(h, 'GET', '/schedule')).body.content.map((x: { id: string }) => x.id)).not.toContain(id);
    expect(
      (await call(h, 'GET', '/schedule?scheduleStates=PAUSED&tags=team=etl')).body.content.map(
        (x: { id: string }) => x.id,
      ),
    ).toContain(id);
    expect((await call(h, 'POST', `/schedule/${id}/resume`)).status).toBe(200);
    const resumedAt = Date.now();
    await eventually(async () => (await scheduleJobs(h, id)).find((j) => nominal(j.jobId) > resumedAt), 60_000, 500);

    // Disable: DISABLED with its time; delete keeps the jobs it made.
    expect((await call(h, 'POST', `/schedule/${id}/disable`)).status).toBe(200);
    const disabled = (await call(h, 'GET', `/schedule/${id}`)).body;
    expect(disabled.state).toBe('DISABLED');
    expect(disabled.disabledTime).toBeGreaterThanOrEqual(resumedAt);
    const count = (await scheduleJobs(h, id)).length;
    expect((await call(h, 'DELETE', `/schedule/${id}`)).status).toBe(200);
    expect((await call(h, 'GET', `/schedule/${id}`)).status).toBe(404);
    expect((await scheduleJobs(h, id)).length).toBeGreaterThanOrEqual(count);
    // The name is free again.
    const again = await call(
      h,
      'POST',
      '/schedule',
      form({ name: 'every-5s', cron: '0 3 * * *', language: 'PYTHON', jobClass: 'tick' }, APP),
    );
    expect(again.status).toBe(200);
  });

  it('stops at endTime and then reads DISABLED', async ({ expect }) => {
    const endTime = Date.now() + 12_000;
    const r = await call(
      h,
      'POST',
      '/schedule',
      form(
        { name: 'short-lived', cron: '@every 4s', language: 'PYTHON', jobClass: 'tick', endTime: String(endTime) },
        APP,
      ),
    );
    expect(r.status).toBe(200);
    const id = r.body.scheduleId;
    const s = await eventually(
      async () => {
        const b = (await call(h, 'GET', `/schedule/${id}`)).body;
        return b.state === 'DISABLED' ? b : undefined;
      },
      60_000,
      500,
    );
    expect(s.endTime).toBe(endTime);
    const jobs = await scheduleJobs(h, id);
    expect(jobs.length).toBeGreaterThan(0);
    expect(jobs.every((j) => nominal(j.jobId) <= endTime)).toBe(true);
    await new Promise((res) => setTimeout(res, 6_000));
    expect((await scheduleJobs(h, id)).length).toBe(jobs.length);
    expect((await call(h, 'POST', `/schedule/${id}/resume`)).status).toBe(409);
  });

  it('answers client mistakes', async ({ expect }) => {
    const base = { name: 'bad', cron: '*/5 * * * *', language: 'PYTHON', jobClass: 'tick' };
    const bad = async (fields: Record<string, string>, status: number, message: RegExp) => {
      const r = await call(h, 'POST', '/schedule', form({ ...base, ...fields }, APP));
      expect(r.status).toBe(status);
      expect(r.body.message).toMatch(message);
    };
    await bad({ cron: '61 * * * *' }, 409, /cron/);
    await bad({ cron: '* * * *' }, 409, /cron: .* 4 fields/);
    await bad({ cron: 'every day' }, 409, /cron/);
    await bad({ jobClass: '' }, 409, /jobClass/);
    await bad({ endTime: String(Date.now() - 1000) }, 409, /endTime/);
    await bad({ startTime: '5000', endTime: '4000' }, 409, /endTime/);
    await bad({ startTime: 'soon' }, 409, /startTime/);
    await bad({ maxRetries: 'x' }, 409, /maxRetries/);
    await bad({ clusterName: 'nowhere' }, 404, /nowhere/);
    expect((await call(h, 'POST', '/schedule', form(base, APP))).status).toBe(200);
    await bad({}, 409, /already exists/);
    expect((await call(h, 'GET', '/schedule/nope')).status).toBe(404);
    expect((await call(h, 'POST', '/schedule/nope/pause')).status).toBe(404);
    expect((await call(h, 'PUT', '/schedule/nope', form({ description: 'x' }))).status).toBe(404);
    expect((await call(h, 'GET', '/schedule?scheduleStates=SLEEPING')).status).toBe(409);
  });
});

describe.concurrent('schedules across restarts', () => {
  it('loses no tick when the worker and the Temporal server restart', async ({ expect }) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sched-restart-'));
    let services = await startServers({ dir, persistent: true });
    const env = { TEMPORAL_ADDRESS: services.temporalAddress, MONGO_URL: services.mongoUrl };
    let h = await startHarness({ env });
    try {
      const r = await call(
        h,
        'POST',
        '/schedule',
        form({ name: 'survivor', cron: '@every 5s', language: 'PYTHON', jobClass: 'tick' }, APP),
      );
      expect(r.status).toBe(200);
      const id = r.body.scheduleId;
      await eventually(async () => (await scheduleJobs(h, id)).length >= 1, 60_000, 500);
      // Everything goes down for longer than one interval (8 s against 5 s; the restart adds more).
      const mongoUrl = services.mongoUrl;
      await h.stop();
      await services.stop();
      const downAt = Date.now();
      // Nobody else may take the servers' ports meanwhile (other test files pick free ports all the time).
      const release = await holdPorts([services.ports.temporal, services.ports.mongo]);
      await new Promise((res) => setTimeout(res, 8_000));
      await release();
      services = await startServers({ dir, persistent: true, ports: services.ports });
      h = await startHarness({
        env: {
          ...env,
          MONGO_URL: mongoUrl,
          MONGO_DB: h.config.MONGO_DB,
          TASK_QUEUE: h.config.TASK_QUEUE,
          DRIVER_DIR: h.config.DRIVER_DIR,
        },
      });
      const upAt = Date.now();
      // The ticks that fell in the outage run after it (catch-up), and ticks go on afterwards.
      const jobs = await eventually(
        async () => {
          const all = await scheduleJobs(h, id);
          return all.some((j) => nominal(j.jobId) > upAt + 5_000) ? all : undefined;
        },
        120_000,
        1000,
      );
      const times = jobs.map((j) => nominal(j.jobId)).sort((a, b) => a - b);
      expect(times.some((t) => t >= downAt && t < upAt)).toBe(true);
      // No tick was run twice.
      expect(new Set(times).size).toBe(times.length);
    } finally {
      await h.stop().catch(() => undefined);
      await services.stop();
      // Shown only if the test failed (vitest's silent: 'passed-only'): what the servers said across the restart.
      for (const log of ['mongo.log', 'temporal.log']) {
        const text = existsSync(path.join(dir, 'logs', log)) ? readFileSync(path.join(dir, 'logs', log), 'utf8') : '';
        console.error(`--- ${log}, last lines:\n${text.trim().split('\n').slice(-40).join('\n')}`);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
