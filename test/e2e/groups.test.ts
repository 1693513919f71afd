// Groups end to end: HTTP API → group workflow → local adapter → real Spark drivers running runner/,
// executions through the group's task queue, results on the Socket.IO stream.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { io as ioClient, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricSum, scrape } from '../../testkit/metrics';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const JOBS_PY = `
from operator import add
from random import random
from ilum.api import IlumJob


class SquareSum(IlumJob):
    def run(self, spark, config):
        n = int(config.get('n', '1000'))
        return str(spark.sparkContext.parallelize(range(1, n + 1), 2).map(lambda x: x * x).sum())


class Echo(IlumJob):
    def run(self, spark, config):
        return config.get('say')


class Boom(IlumJob):
    def run(self, spark, config):
        raise RuntimeError('job class failed on purpose')


# Exactly the public example of the ilum-job-api package.
class SparkPiInteractiveExample(IlumJob):

    def run(self, spark, config):
        partitions = int(config.get('partitions', '5'))
        n = 100000 * partitions

        def f(_: int) -> float:
            x = random() * 2 - 1
            y = random() * 2 - 1
            return 1 if x ** 2 + y ** 2 <= 1 else 0

        count = spark.sparkContext.parallelize(range(1, n + 1), partitions).map(f).reduce(add)

        return "Pi is roughly %f" % (4.0 * count / n)
`;

let h: Harness;
let groupId: string;
let socket: Socket;
const results = new Map<string, { jobInstanceId: string; result: string | null; endTime?: number }>();

type Job = { jobId: string; state: string };
const getGroup = async (id = groupId, q = '') => (await call(h, 'GET', `/group/${id}${q}`)).body;
const instances = async (id = groupId, states = 'STARTING,READY,BUSY') =>
  (await getGroup(id, `?jobStates=${states}`)).jobs as Job[];
const waitReady = (n: number, id = groupId, timeoutMs = 180_000) =>
  eventually(
    async () => {
      const live = await instances(id);
      return live.length === n && live.every((j) => j.state === 'READY') ? live : undefined;
    },
    timeoutMs,
    500,
  );
const execute = (body: unknown, id = groupId) => call(h, 'POST', `/group/${id}/job/execute`, body);

beforeAll(async () => {
  h = await startHarness();
  await scrape(h.url); // /metrics observes executions from its first scrape on
  const r = await call(
    h,
    'POST',
    '/group',
    form(
      {
        name: 'warm-python',
        description: 'two warm drivers',
        language: 'PYTHON',
        scale: '2',
        tags: 'team=ml',
        jobConfig: 'spark.sql.shuffle.partitions=2',
        driverMemory: '512m',
      },
      { pyFiles: [{ name: 'jobs.py', content: JOBS_PY }] },
    ),
  );
  expect(r.status).toBe(200);
  groupId = r.body.groupId;
  socket = ioClient(h.url.replace('/api/v1', '') + '/group-job-results', {
    transports: ['websocket'],
    query: { groupIds: groupId },
  });
  socket.on('jobInstanceResult', (res: { jobInstanceId: string; result: string | null; endTime?: number }) => {
    if (res.endTime) results.set(res.jobInstanceId, res);
  });
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
});
afterAll(async () => {
  socket?.close();
  await h?.stop();
});

// Two lanes side by side: the groups of the file's harness, in order; the autoPause group on a harness of its own
// (its own API, metrics, task queue and database), whose driver start and idle wait take the other core.
// Concurrent cases take `expect` from their context, so a failure is told against the right case.
describe.concurrent("on the file's harness", () => {
  describe.sequential('a PYTHON group of interactive drivers', () => {
    it('is readable at once, then brings both instances to READY', async ({ expect }) => {
      const g = await getGroup();
      expect(g).toMatchObject({
        id: groupId,
        name: 'warm-python',
        kind: 'JOB',
        language: 'PYTHON',
        state: 'ACTIVE',
        scale: 2,
        tags: 'team=ml',
        autoPause: false,
      });
      expect(g.jobConfig).toEqual({ 'spark.sql.shuffle.partitions': '2' });
      const ready = await waitReady(2);
      expect(ready.every((j) => j.state === 'READY')).toBe(true);
      const byName = await call(h, 'GET', '/group/name/warm-python');
      expect(byName.body.id).toBe(groupId);
    });

    it('executes a job class that uses Spark and returns the computed value', async ({ expect }) => {
      const r = await execute({
        type: 'interactive_job_execute',
        jobClass: 'jobs.SquareSum',
        jobConfig: { n: '1000' },
      });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        groupId,
        jobClass: 'jobs.SquareSum',
        result: '333833500',
        error: null,
        jobConfig: { n: '1000' },
      });
      const live = await instances();
      expect(live.map((j) => j.jobId)).toContain(r.body.jobId);
      expect(r.body.endTime).toBeGreaterThanOrEqual(r.body.startTime);
      const pi = await execute({ jobClass: 'jobs.SparkPiInteractiveExample', jobConfig: { partitions: '2' } });
      expect(pi.body.result).toMatch(/^Pi is roughly 3\.1/);
      // Both executions on the API's metrics: counted by group and outcome, with their latency.
      const m = await eventually(async () => {
        const samples = await scrape(h.url);
        return metricSum(samples, 'spark_group_executions_total', { group: groupId }) >= 2 ? samples : undefined;
      }, 10_000);
      expect(metricSum(m, 'spark_group_executions_total', { group: groupId, outcome: 'success' })).toBe(2);
      expect(metricSum(m, 'spark_group_execution_duration_seconds_count', { group: groupId })).toBe(2);
      const route = { method: 'POST', route: '/api/v1/group/:groupId/job/execute', status: '200' };
      expect(metricSum(m, 'http_request_duration_seconds_count', route)).toBe(2);
    });

    it('delivers ten submitted executions on the result stream', async ({ expect }) => {
      const ids = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const r = await call(h, 'POST', `/group/${groupId}/job/submit`, {
            jobClass: 'jobs.Echo',
            jobConfig: { say: `hello-${i}` },
          });
          expect(r.status).toBe(200);
          return r.body.jobInstanceId as string;
        }),
      );
      await eventually(async () => ids.every((id) => results.has(id)), 60_000);
      expect(ids.map((id) => results.get(id)!.result).sort()).toEqual(
        Array.from({ length: 10 }, (_, i) => `hello-${i}`).sort(),
      );
      const listed = await call(h, 'GET', `/group/${groupId}/job/result?size=100&search=Echo`);
      expect(listed.body.totalElements).toBe(10);
    });

    it('turns an exception or an unknown class into a result error, not a server error', async ({ expect }) => {
      const boom = await execute({ jobClass: 'jobs.Boom', jobConfig: {} });
      expect(boom.status).toBe(200);
      expect(boom.body.result).toBeNull();
      expect(boom.body.error.message).toMatch(/job class failed on purpose/);
      expect(boom.body.error.stackTrace).toMatch(/Traceback|RuntimeError/);
      const missing = await execute({ jobClass: 'nowhere.Nothing', jobConfig: {} });
      expect(missing.status).toBe(200);
      expect(missing.body.error.message).toMatch(/nowhere/);
    });

    it('answers client mistakes with 404 and 409', async ({ expect }) => {
      expect((await execute({ jobClass: 'jobs.Echo', jobConfig: {} }, 'no-such-group')).status).toBe(404);
      expect((await execute({ jobConfig: {} })).status).toBe(409);
      expect((await execute({ type: 'interactive_code_execute', code: '1+1' })).status).toBe(409);
      expect((await execute({ jobClass: 'jobs.Echo', jobConfig: 'x' })).status).toBe(409);
      expect(
        (await call(h, 'POST', `/group/${groupId}/job/execute`, '{bad', { 'content-type': 'application/json' })).status,
      ).toBe(400);
      expect((await call(h, 'POST', `/group/${groupId}/rescale/abc`)).status).toBe(409);
      expect((await call(h, 'POST', `/group/${groupId}/rescale/1000`)).status).toBe(402);
      expect((await call(h, 'POST', '/group/nope/rescale/1')).status).toBe(404);
      const dup = await call(h, 'POST', '/group', form({ name: 'warm-python', language: 'PYTHON' }));
      expect(dup.status).toBe(409);
      expect(
        (await call(h, 'POST', '/group', form({ name: 'g2', language: 'PYTHON', clusterName: 'nowhere' }))).status,
      ).toBe(404);
      expect((await call(h, 'POST', '/group', form({ name: 'g3', language: 'PYTHON', scale: '99' }))).status).toBe(402);
      expect((await call(h, 'GET', '/group/name/nothing')).status).toBe(404);
      expect((await call(h, 'GET', '/group?groupStates=GONE')).status).toBe(409);
    });

    it('replaces a driver that dies, and keeps answering', async ({ expect }) => {
      const [victim] = await instances();
      const pidFile = path.join(h.config.DRIVER_DIR, `inst-${victim.jobId}`, 'pid');
      const pid = Number(readFileSync(pidFile, 'utf8'));
      // The whole process group: spark-submit's JVM and the Python runner under it.
      process.kill(-pid, 'SIGKILL');
      await eventually(async () => {
        const all = (await getGroup(groupId, '?jobStates=FAILED')).jobs as Job[];
        return all.some((j) => j.jobId === victim.jobId);
      }, 60_000);
      const r = await execute({ jobClass: 'jobs.Echo', jobConfig: { say: 'still here' } });
      expect(r.body.result).toBe('still here');
      const ready = await waitReady(2);
      expect(ready.map((j) => j.jobId)).not.toContain(victim.jobId);
    });

    it('rescales 2 → 1 → 3', async ({ expect }) => {
      expect((await call(h, 'POST', `/group/${groupId}/rescale/1`)).status).toBe(200);
      expect((await getGroup()).scale).toBe(1);
      await waitReady(1);
      expect((await call(h, 'POST', `/group/${groupId}/rescale/3`)).status).toBe(200);
      await waitReady(3);
      const r = await execute({ jobClass: 'jobs.Echo', jobConfig: { say: 'three' } });
      expect(r.body.result).toBe('three');
    });

    it('updates settings: the instances restart with them', async ({ expect }) => {
      const before = (await instances()).map((j) => j.jobId);
      const u = await call(
        h,
        'PUT',
        `/group/${groupId}`,
        form({ description: 'updated', jobConfig: 'spark.sql.shuffle.partitions=3', scale: '1' }),
      );
      expect(u.status).toBe(200);
      const g = await getGroup();
      expect(g).toMatchObject({ description: 'updated', scale: 1, jobConfig: { 'spark.sql.shuffle.partitions': '3' } });
      const ready = await waitReady(1);
      expect(before).not.toContain(ready[0].jobId);
      const r = await execute({ jobClass: 'jobs.Echo', jobConfig: { say: 'after update' } });
      expect(r.body.result).toBe('after update');
      expect((await call(h, 'PUT', `/group/${groupId}`, form({ jobConfig: 'nope' }))).status).toBe(409);
    });

    it('pauses on request (executions answer 409), resumes, and restarts while answering', async ({ expect }) => {
      expect((await call(h, 'POST', `/group/${groupId}/pause`)).status).toBe(200);
      expect(await getGroup()).toMatchObject({ paused: true, state: 'ACTIVE' });
      const refused = await execute({ jobClass: 'jobs.Echo', jobConfig: { say: 'x' } });
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/paused/);
      await eventually(async () => ((await instances()).length === 0 ? true : undefined), 60_000, 500);
      expect((await call(h, 'POST', `/group/${groupId}/resume`)).status).toBe(200);
      const scale = (await getGroup()).scale as number;
      await waitReady(scale);
      expect((await execute({ jobClass: 'jobs.Echo', jobConfig: { say: 'back' } })).body.result).toBe('back');
      const before = (await instances()).map((j) => j.jobId);
      expect((await call(h, 'POST', `/group/${groupId}/restart`)).status).toBe(200);
      // The old drivers answer while the new ones start.
      expect((await execute({ jobClass: 'jobs.Echo', jobConfig: { say: 'during' } })).body.result).toBe('during');
      const after = await waitReady(scale);
      expect(after.map((j) => j.jobId).some((id) => before.includes(id))).toBe(false);
      expect((await call(h, 'POST', '/group/nope/restart')).status).toBe(404);
    });

    it('archives: instances stop, no more executions', async ({ expect }) => {
      expect((await call(h, 'POST', `/group/${groupId}/stop`)).status).toBe(200);
      expect((await getGroup()).state).toBe('ARCHIVED');
      expect((await execute({ jobClass: 'jobs.Echo', jobConfig: {} })).status).toBe(409);
      await eventually(async () => (await instances()).length === 0, 60_000);
      const listed = await call(h, 'GET', '/group?groupStates=ARCHIVED&tags=team=ml');
      expect(listed.body.content.map((g: { id: string }) => g.id)).toContain(groupId);
      expect((await call(h, 'POST', `/group/${groupId}/stop`)).status).toBe(409);
      // The test server suggests continue-as-new after 120 events (test/global-setup.ts): this group's
      // workflow went through it, and everything above kept working across the runs.
      const runs = await eventually(async () => {
        const statuses: string[] = [];
        for await (const w of h.temporal.workflow.list({ query: `WorkflowId = 'group/${groupId}'` }))
          statuses.push(w.status.name);
        return statuses.includes('CONTINUED_AS_NEW') ? statuses : undefined;
      }, 10_000);
      expect(runs.length).toBeGreaterThan(1);
      expect((await call(h, 'DELETE', `/group/${groupId}`)).status).toBe(200);
      expect((await call(h, 'GET', `/group/${groupId}`)).status).toBe(404);
    });
  });

  describe.sequential('a CODE group', () => {
    it('runs code in a persistent scope per driver', async ({ expect }) => {
      const r = await call(
        h,
        'POST',
        '/group',
        form({ name: 'notebook', kind: 'CODE', language: 'PYTHON', scale: '1' }),
      );
      expect(r.status).toBe(200);
      const id = r.body.groupId;
      await waitReady(1, id);
      const a = await execute({ type: 'interactive_code_execute', code: 'x = spark.range(10).count()\nx * 2' }, id);
      expect(a.body).toMatchObject({ result: '20', error: null });
      const b = await execute({ type: 'interactive_code_execute', code: 'print("x is", x)' }, id);
      expect(b.body.result?.trim()).toBe('x is 10');
      const c = await execute({ type: 'interactive_code_execute', code: '1/0' }, id);
      expect(c.body.error.message).toMatch(/ZeroDivisionError/);
      expect((await call(h, 'DELETE', `/group/${id}`)).status).toBe(200);
    });
  });
});

describe.concurrent('on a harness of its own', () => {
  describe.sequential('a group with autoPause', () => {
    it('stops its drivers when idle, and an execution wakes it and waits for a driver', async ({ expect }) => {
      const hp = await startHarness({ env: { GROUP_IDLE_PAUSE_MS: '3000' } });
      try {
        const r = await call(
          hp,
          'POST',
          '/group',
          form(
            { name: 'sleepy', language: 'PYTHON', scale: '1', autoPause: 'true' },
            { pyFiles: [{ name: 'jobs.py', content: JOBS_PY }] },
          ),
        );
        expect(r.status).toBe(200);
        const id = r.body.groupId;
        const live = async () =>
          (await call(hp, 'GET', `/group/${id}?jobStates=STARTING,READY,BUSY`)).body.jobs as Job[];
        await eventually(async () => (await live()).some((j) => j.state === 'READY'), 180_000, 500);
        // Idle for 3 s: the driver stops; the group stays ACTIVE.
        await eventually(async () => (await live()).length === 0, 60_000, 500);
        const g = (await call(hp, 'GET', `/group/${id}`)).body;
        expect(g).toMatchObject({ state: 'ACTIVE', autoPause: true, scale: 1 });
        // The next execution waits for a new driver instead of failing.
        const e = await call(hp, 'POST', `/group/${id}/job/execute`, {
          jobClass: 'jobs.Echo',
          jobConfig: { say: 'awake' },
        });
        expect(e.status).toBe(200);
        expect(e.body.result).toBe('awake');
        expect((await call(hp, 'DELETE', `/group/${id}`)).status).toBe(200);
      } finally {
        await hp.stop();
      }
    });
  });
});
