// The direct execute path end to end: a CODE group of two real local Spark drivers; POST .../job/execute
// goes straight to a runner's HTTP channel (no `jobinstance/<id>` workflow), the result reaches GET results
// and both result streams, a driver killed mid-call is retried on the other one, the runner refuses a
// missing or forged secret, and asynchronous submissions still run as workflows.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { io as ioClient, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DirectEndpoint } from '../../domain/group';
import { groupWorkflowId, jobInstanceWorkflowId } from '../../domain/ids';
import { DIRECT_SECRET_HEADER, directSecret } from '../../lib/driver-secret';
import { startApi } from '../../api/server';
import { directEndpointsQuery } from '../../workflows/group';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const JOBS_PY = `
class Echo:
    def run(self, spark, config):
        return config.get('say')
`;

type Result = { jobInstanceId: string; result: string | null; endTime?: number; jobId?: string };

let h: Harness;
let groupId: string;
let socket: Socket;
const socketResults = new Map<string, Result>();
const sseResults = new Map<string, Result>();
const sse = new AbortController();

const execute = (body: unknown) => call(h, 'POST', `/group/${groupId}/job/execute`, body);
const endpoints = () =>
  h.temporal.workflow.getHandle(groupWorkflowId(groupId)).query(directEndpointsQuery) as Promise<DirectEndpoint[]>;

/** Whether the execution ran as a workflow of its own. */
async function hasWorkflow(jobInstanceId: string): Promise<boolean> {
  try {
    await h.temporal.workflow.getHandle(jobInstanceWorkflowId(jobInstanceId)).describe();
    return true;
  } catch {
    return false;
  }
}

/** Collects the SSE result stream of the group in the background until the file ends. */
async function followSse(): Promise<void> {
  const res = await fetch(`${h.url}/group/job/result/updates?groupIds=${groupId}`, { signal: sse.signal });
  const reader = res.body!.getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += new TextDecoder().decode(value);
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const data = /^data: (.*)$/m.exec(buf.slice(0, i))?.[1];
      buf = buf.slice(i + 2);
      if (!data) continue;
      const r = JSON.parse(data) as Result;
      if (r.endTime) sseResults.set(r.jobInstanceId, r);
    }
  }
}

beforeAll(async () => {
  h = await startHarness();
  const r = await call(
    h,
    'POST',
    '/group',
    form(
      { name: 'direct', language: 'PYTHON', kind: 'CODE', scale: '2', driverMemory: '512m' },
      { pyFiles: [{ name: 'jobs.py', content: JOBS_PY }] },
    ),
  );
  expect(r.status).toBe(200);
  groupId = r.body.groupId;
  socket = ioClient(h.url.replace('/api/v1', '') + '/group-job-results', {
    transports: ['websocket'],
    query: { groupIds: groupId },
  });
  socket.on('jobInstanceResult', (res: Result) => {
    if (res.endTime) socketResults.set(res.jobInstanceId, res);
  });
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  followSse().catch(() => undefined);
  await eventually(async () => ((await endpoints()).length === 2 ? true : undefined), 240_000, 500);
}, 300_000);

afterAll(async () => {
  sse.abort();
  socket?.close();
  if (groupId) await call(h, 'DELETE', `/group/${groupId}`);
  await h?.stop();
}, 90_000);

describe('synchronous executions over the direct channel', () => {
  it('run job classes and code without a workflow, and reach GET results and both streams', async () => {
    const eps = await endpoints();
    expect(eps.every((e) => e.endpoint.startsWith('127.0.0.1:'))).toBe(true);
    const job = await execute({ type: 'interactive_job_execute', jobClass: 'jobs.Echo', jobConfig: { say: 'hi' } });
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({ groupId, jobClass: 'jobs.Echo', result: 'hi', error: null });
    expect(eps.map((e) => e.instanceId)).toContain(job.body.jobId);
    const code = await execute({ type: 'interactive_code_execute', code: 'sum(range(10))' });
    expect(code.body).toMatchObject({ result: '45', error: null });
    const bad = await execute({ type: 'interactive_code_execute', code: '1/0' });
    expect(bad.status).toBe(200);
    expect(bad.body.error.message).toMatch(/ZeroDivisionError/);
    const ids = [job, code, bad].map((r) => r.body.jobInstanceId as string);
    for (const id of ids) expect(await hasWorkflow(id)).toBe(false);

    const listed = await call(h, 'GET', `/group/${groupId}/job/result?size=100`);
    expect(listed.body.content.map((r: Result) => r.jobInstanceId)).toEqual(expect.arrayContaining(ids));
    await eventually(async () => ids.every((id) => socketResults.has(id) && sseResults.has(id)), 15_000);
    expect(socketResults.get(ids[0])!.result).toBe('hi');
    expect(sseResults.get(ids[1])!.result).toBe('45');
  });

  it('refuses a missing or forged secret at the runner', async () => {
    const [e] = await endpoints();
    const post = (headers: Record<string, string>) =>
      fetch(`http://${e.endpoint}/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          jobInstanceId: 'x',
          groupId,
          type: 'interactive_code_execute',
          code: '1',
          jobConfig: {},
        }),
      });
    const missing = await post({});
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { message: string }).message).toMatch(/x-runner-secret/);
    const forged = await post({ [DIRECT_SECRET_HEADER]: directSecret('00'.repeat(32), e.driverId) });
    expect(forged.status).toBe(401);
    const otherDriver = await post({ [DIRECT_SECRET_HEADER]: directSecret(h.config.SECRET_KEY, 'inst-other') });
    expect(otherDriver.status).toBe(401);
    const right = await post({ [DIRECT_SECRET_HEADER]: directSecret(h.config.SECRET_KEY, e.driverId) });
    expect(right.status).toBe(200);
    // The secret is nowhere in the API's answers about the group.
    const g = await call(h, 'GET', `/group/${groupId}`);
    expect(JSON.stringify(g.body)).not.toContain(e.endpoint);
  });

  it('still runs an asynchronous submission as a durable workflow', async () => {
    const r = await call(h, 'POST', `/group/${groupId}/job/submit`, { jobClass: 'jobs.Echo', jobConfig: { say: 'a' } });
    expect(r.status).toBe(200);
    const id = r.body.jobInstanceId as string;
    await eventually(async () => socketResults.has(id), 60_000);
    expect(socketResults.get(id)!.result).toBe('a');
    expect(await hasWorkflow(id)).toBe(true);
  });

  it('runs asynchronous submissions whose API stopped right after accepting them', async () => {
    // A second API process's worth: its own server on the same store and Temporal, closed at once after
    // answering, as a restart would; the results are then read through the other API.
    const other = await startApi({
      config: h.config,
      store: h.store,
      temporal: h.temporal,
      port: 0,
      host: '127.0.0.1',
    });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await call(other, 'POST', `/group/${groupId}/job/submit`, {
        jobClass: 'jobs.Echo',
        jobConfig: { say: `after-${i}` },
      });
      expect(r.status).toBe(200);
      ids.push(r.body.jobInstanceId as string);
    }
    await other.close();
    await eventually(async () => ids.every((id) => socketResults.has(id)), 90_000);
    expect(ids.map((id) => socketResults.get(id)!.result)).toEqual(ids.map((_, i) => `after-${i}`));
    const listed = await call(h, 'GET', `/group/${groupId}/job/result?size=100`);
    expect(listed.body.content.map((r: Result) => r.jobInstanceId)).toEqual(expect.arrayContaining(ids));
  }, 120_000);

  it('retries on the other instance when the driver dies mid-call, and never hangs', async () => {
    const slow = execute({ type: 'interactive_code_execute', code: 'import time\ntime.sleep(6)\n"slow"' });
    // The instance running it turns BUSY; kill its whole driver (spark-submit and the runner).
    const busy = await eventually(async () => {
      const g = await call(h, 'GET', `/group/${groupId}?jobStates=BUSY`);
      return (g.body.jobs as { jobId: string }[])[0]?.jobId;
    }, 5_000);
    const pid = Number(readFileSync(path.join(h.config.DRIVER_DIR, `inst-${busy}`, 'pid'), 'utf8'));
    process.kill(-pid, 'SIGKILL');
    const started = Date.now();
    const r = await slow;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ result: 'slow', error: null });
    expect(r.body.jobId).not.toBe(busy);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
