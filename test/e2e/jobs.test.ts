// Single jobs end to end: HTTP API → Temporal job workflow → local adapter → real spark-submit, with the
// job stream watched over Socket.IO and SSE.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { io as ioClient, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, form, startHarness, type Harness } from '../harness';

let h: Harness;
let socket: Socket;
const seen = new Map<string, string[]>();

beforeAll(async () => {
  h = await startHarness();
  socket = ioClient(h.url.replace('/api/v1', '') + '/jobs', { transports: ['websocket'] });
  // The states each job went through, a repeated state kept only when it is another try's (a try whose driver
  // ended before its workflow saw it run goes STARTING → STARTING of the next try, with no BUSY between).
  const lastAttempt = new Map<string, number>();
  socket.on('job', (job: { jobId: string; state: string; attempt: number }) => {
    const states = seen.get(job.jobId) ?? [];
    if (states[states.length - 1] !== job.state || lastAttempt.get(job.jobId) !== job.attempt) states.push(job.state);
    lastAttempt.set(job.jobId, job.attempt);
    seen.set(job.jobId, states);
  });
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
});
afterAll(async () => {
  socket?.close();
  await h?.stop();
});

const PI_APP = `
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
n = int(sys.argv[1])
total = spark.sparkContext.parallelize(range(1, n + 1), 4).map(lambda x: x * x).sum()
print("SUM_OF_SQUARES=%d" % total)
print("CONF=%s" % spark.conf.get("spark.myapp.flag"))
spark.stop()
`;

const getJob = async (jobId: string) => (await call(h, 'GET', `/job/${jobId}`)).body;
const waitState = (jobId: string, states: string[], timeoutMs = 120_000) =>
  eventually(
    async () => {
      const j = await getJob(jobId);
      return states.includes(j.state) ? j : undefined;
    },
    timeoutMs,
    300,
  );

describe('single jobs on the local cluster', () => {
  it('runs a PySpark application to FINISHED, streams every state in order and shows its output in the logs', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        {
          name: 'sum-of-squares',
          language: 'PYTHON',
          jobClass: 'squares',
          args: '1000',
          jobConfig: 'spark.myapp.flag=on;spark.sql.shuffle.partitions=2',
          tags: 'team=data;env=test',
          driverMemory: '512m',
        },
        { pyFiles: [{ name: 'squares.py', content: PI_APP }] },
      ),
    );
    expect(r.status).toBe(200);
    const jobId = r.body.jobId;
    // Read-your-writes: the id is readable as soon as submit returns.
    const first = await getJob(jobId);
    expect(first).toMatchObject({
      jobId,
      jobName: 'sum-of-squares',
      jobType: 'SINGLE',
      language: 'PYTHON',
      tags: 'team=data;env=test',
      attempt: 1,
      maxRetries: 0,
    });
    const done = await waitState(jobId, ['FINISHED', 'FAILED']);
    expect(done.state).toBe('FINISHED');
    expect(done.appId).toMatch(/^local-\d+/);
    expect(done.startTime).toBeGreaterThanOrEqual(done.submitTime);
    expect(done.endTime).toBeGreaterThanOrEqual(done.startTime);
    expect(done.memorySettings).toMatchObject({ driverMemory: '512m' });
    const logs = await call(h, 'GET', `/job/${jobId}/logs?logSize=25000`);
    expect(logs.status).toBe(200);
    expect(logs.body[0]).toMatchObject({ role: 'driver', from: 0 });
    const lines: string[] = logs.body.flatMap((e: { log: string[] }) => e.log);
    // Spark's PythonRunner runs Python unbuffered, so print's text and its newline are two writes, and a log4j line
    // (stderr, the same file) can land between them: the text is looked for within the log, not as a whole line.
    expect(lines.join('\n')).toContain('SUM_OF_SQUARES=333833500');
    expect(lines.join('\n')).toContain('CONF=on');
    // Paging of the log.
    const page = await call(h, 'GET', `/job/${jobId}/logs?from=2&logSize=3`);
    expect(page.body[0].log).toEqual(logs.body[0].log.slice(2, 5));
    expect(page.body[0]).toMatchObject({ from: 2, logSize: 3 });
    await eventually(async () => seen.get(jobId)?.includes('FINISHED'));
    expect(seen.get(jobId)).toEqual(['SUBMITTED', 'STARTING', 'BUSY', 'FINISHED']);
    // The default list shows live jobs only; asking for FINISHED finds it.
    const live = await call(h, 'GET', '/job');
    expect(live.body.content.map((j: { jobId: string }) => j.jobId)).not.toContain(jobId);
    const finished = await call(
      h,
      'GET',
      '/job?jobStates=FINISHED,FAILED&tags=team=data&jobTypes=SINGLE&search=squares',
    );
    expect(finished.body.content.map((j: { jobId: string }) => j.jobId)).toContain(jobId);
  });

  it('runs a SCALA application (a Java main class compiled against pyspark jars)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'scala-job-'));
    writeFileSync(
      path.join(dir, 'CountJob.java'),
      `import org.apache.spark.sql.SparkSession;
public class CountJob {
  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().getOrCreate();
    long n = spark.range(0, Long.parseLong(args[0])).filter("id % 3 = 0").count();
    System.out.println("MULTIPLES_OF_3=" + n);
    spark.stop();
  }
}`,
    );
    // Not execFileSync: javac takes seconds, and an event loop blocked longer than the server's keep-alive
    // timeout makes the next request on a kept-alive connection fail with ECONNRESET.
    await promisify(execFile)('javac', [
      '-cp',
      path.join(h.config.SPARK_HOME, 'jars', '*'),
      '-d',
      dir,
      path.join(dir, 'CountJob.java'),
    ]);
    await promisify(execFile)('jar', ['cf', path.join(dir, 'count.jar'), '-C', dir, 'CountJob.class']);
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        { name: 'scala-count', jobClass: 'CountJob', args: '3000' },
        { jars: [{ name: 'count.jar', content: readFileSync(path.join(dir, 'count.jar')) }] },
      ),
    );
    expect(r.status).toBe(200);
    const done = await waitState(r.body.jobId, ['FINISHED', 'FAILED']);
    expect(done).toMatchObject({ state: 'FINISHED', language: 'SCALA', jobClass: 'CountJob' });
    const logs = await call(h, 'GET', `/job/${r.body.jobId}/logs?logSize=25000`);
    expect(logs.body.flatMap((e: { log: string[] }) => e.log)).toContain('MULTIPLES_OF_3=1000');
  });

  it('retries a failing application: FAILED after attempt 3 with maxRetries 2', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        { name: 'always-fails', language: 'PYTHON', jobClass: 'boom', maxRetries: '2' },
        { pyFiles: [{ name: 'boom.py', content: 'raise ValueError("broken on purpose")\n' }] },
      ),
    );
    expect(r.status).toBe(200);
    const done = await waitState(r.body.jobId, ['FINISHED', 'FAILED'], 150_000);
    expect(done).toMatchObject({ state: 'FAILED', attempt: 3, maxRetries: 2 });
    expect(done.error).toMatch(/broken on purpose/);
    // One log entry per try.
    const logs = await call(h, 'GET', `/job/${r.body.jobId}/logs`);
    expect(logs.body.map((e: { name: string }) => e.name)).toEqual([1, 2, 3].map((a) => `job-${r.body.jobId}-${a}`));
    expect(seen.get(r.body.jobId)?.filter((s) => s === 'STARTING').length).toBe(3);
  });

  it('cancels a long job: CANCELED and no driver process left', async () => {
    const marker = `long-${Date.now()}`;
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        { name: 'long', language: 'PYTHON', jobClass: 'sleepy', args: marker },
        {
          pyFiles: [
            {
              name: 'sleepy.py',
              content:
                'import time, sys\nfrom pyspark.sql import SparkSession\nSparkSession.builder.getOrCreate()\nprint("started", flush=True)\ntime.sleep(600)\n',
            },
          ],
        },
      ),
    );
    const jobId = r.body.jobId;
    await waitState(jobId, ['BUSY']);
    const c = await call(h, 'POST', `/job/${jobId}/cancel`);
    expect(c.status).toBe(200);
    const done = await waitState(jobId, ['CANCELED', 'FINISHED', 'FAILED'], 30_000);
    expect(done.state).toBe('CANCELED');
    await eventually(async () => {
      try {
        execFileSync('pgrep', ['-f', marker]);
        return false;
      } catch {
        return true; // pgrep exits 1 when nothing matches
      }
    }, 15_000);
    expect((await call(h, 'POST', `/job/${jobId}/cancel`)).status).toBe(409);
    expect((await call(h, 'POST', `/job/${jobId}/stop`)).status).toBe(409);
    // A finished job can be deleted.
    expect((await call(h, 'DELETE', `/job/${jobId}`)).status).toBe(200);
    expect((await call(h, 'GET', `/job/${jobId}`)).status).toBe(404);
  });

  it('stops a running job: FINISHED', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        { name: 'stoppable', language: 'PYTHON', jobClass: 'sleepy2' },
        {
          pyFiles: [
            {
              name: 'sleepy2.py',
              content:
                'import time\nfrom pyspark.sql import SparkSession\nSparkSession.builder.getOrCreate()\ntime.sleep(600)\n',
            },
          ],
        },
      ),
    );
    await waitState(r.body.jobId, ['BUSY']);
    expect((await call(h, 'DELETE', `/job/${r.body.jobId}`)).status).toBe(409);
    expect((await call(h, 'POST', `/job/${r.body.jobId}/stop`)).status).toBe(200);
    const done = await waitState(r.body.jobId, ['FINISHED', 'FAILED', 'CANCELED'], 30_000);
    expect(done.state).toBe('FINISHED');
  });
});

describe('job submission: client mistakes', () => {
  const py = { pyFiles: [{ name: 'main.py', content: 'print(1)\n' }] };
  it.each([
    [{ name: 'x', language: 'PYTHON', jobClass: 'main', tags: 'novalue' }, /tags/],
    [{ name: 'x', language: 'PYTHON', jobClass: 'main', jobConfig: 'executor.memory=1g' }, /jobConfig/],
    [{ name: 'x', language: 'PYTHON', jobClass: 'main', pyRequirements: 'numpy>=1' }, /pyRequirements/],
    [{ name: 'x', language: 'PYTHON', jobClass: 'main', packages: 'a:b' }, /packages/],
    [{ name: 'x', language: 'PYTHON', jobClass: 'main', maxRetries: '-1' }, /maxRetries/],
    [{ name: 'x', language: 'PYTHON', jobClass: 'main', driverMemory: 'lots' }, /driverMemory/],
    [{ name: 'x', language: 'PYTHON', jobClass: 'main', dynamicAllocation: 'perhaps' }, /dynamicAllocation/],
    [{ name: 'x', language: 'RUBY', jobClass: 'main' }, /language/],
    [{ name: '', language: 'PYTHON', jobClass: 'main' }, /name/],
    [{ name: 'x', language: 'PYTHON', jobClass: 'other' }, /jobClass/],
    [{ name: 'x', language: 'PYTHON', jobClass: 'main', bogus: '1' }, /bogus|unrecognized/i],
  ])('answers 409 for %j', async (fields, message) => {
    const r = await call(h, 'POST', '/job/submit', form(fields as Record<string, string>, py));
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(message);
  });

  it('answers 409 for a SCALA job without a jar, 404 for an unknown cluster, 402 above the quota, 400 for a non-form body', async () => {
    expect((await call(h, 'POST', '/job/submit', form({ name: 'x', jobClass: 'Main' }))).body.message).toMatch(/jars/);
    const nf = await call(
      h,
      'POST',
      '/job/submit',
      form({ name: 'x', language: 'PYTHON', jobClass: 'main', clusterName: 'nowhere' }, py),
    );
    expect(nf.status).toBe(404);
    expect(nf.body.message).toMatch(/nowhere/);
    await call(h, 'POST', '/cluster', {
      name: 'tiny',
      type: 'local',
      resourceQuota: { limitsCpu: '1', limitsMemory: '1Gi' },
    });
    const q = await call(
      h,
      'POST',
      '/job/submit',
      form({ name: 'x', language: 'PYTHON', jobClass: 'main', clusterName: 'tiny', driverCores: '4' }, py),
    );
    expect(q.status).toBe(402);
    expect(q.body.message).toMatch(/CPU/);
    const bad = await call(h, 'POST', '/job/submit', 'name=x', { 'content-type': 'text/plain' });
    expect(bad.status).toBe(400);
    expect((await call(h, 'GET', '/job/nope')).status).toBe(404);
    expect((await call(h, 'GET', '/job/nope/logs')).status).toBe(404);
    expect((await call(h, 'GET', '/job?jobStates=SLEEPING')).status).toBe(409);
    expect((await call(h, 'POST', '/job/nope/cancel')).status).toBe(404);
  });
});
