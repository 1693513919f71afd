// What a job can learn of the service through its own logs, with real local Spark drivers: the service runs
// with SECRET_KEY, AUTH_ADMIN_KEY, MONGO_URL (with a password) and cloud credentials in its environment; a
// PySpark job printing the environment of its Python driver, its JVM and a Python worker, and a CODE group's
// runner returning its own, show none of them (a runner has its own direct-channel secret, derived for its
// driver, and nothing else). A job that swaps its driver.log for a link to a file of the service gets nothing
// of that file through the logs endpoint or its failure message, and the driver's folder holds nothing of
// the service's.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directSecret } from '../../lib/driver-secret';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const hex = (n: number) => randomBytes(n).toString('hex');
// The service's own settings, as an operator would set them in the worker's environment.
const SERVICE_ENV: Record<string, string> = {
  SECRET_KEY: hex(32),
  AUTH_ADMIN_KEY: `admin-key-${hex(16)}`,
  MONGO_URL: `mongodb://orchestrator:mongo-pw-${hex(8)}@127.0.0.1:1/?authSource=admin`,
  AWS_ACCESS_KEY_ID: `AKIA${hex(8).toUpperCase()}`,
  AWS_SECRET_ACCESS_KEY: `aws-secret-${hex(16)}`,
  GITHUB_TOKEN: `ghp_${hex(16)}`,
};
const SECRET_VALUES = Object.values(SERVICE_ENV);
// The parts that identify each value even if a line were cut (the password inside MONGO_URL, say).
const SECRET_MARKERS = SECRET_VALUES.map((v) => /mongo-pw-[0-9a-f]+|[0-9a-f]{16,}/.exec(v)?.[0] ?? v);
const saved: Record<string, string | undefined> = {};

let h: Harness;

beforeAll(async () => {
  for (const [k, v] of Object.entries(SERVICE_ENV)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const leaked = (text: string) => SECRET_MARKERS.filter((m) => text.includes(m));
const getJob = async (jobId: string) => (await call(h, 'GET', `/job/${jobId}`)).body;
const waitEnded = (jobId: string) =>
  eventually(
    async () => {
      const j = await getJob(jobId);
      return ['FINISHED', 'FAILED'].includes(j.state) ? j : undefined;
    },
    180_000,
    500,
  );
const logText = async (jobId: string) =>
  JSON.stringify((await call(h, 'GET', `/job/${jobId}/logs?logSize=25000`)).body);

/** Every file of a folder and below, small enough to read. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p);
    return e.isFile() && statSync(p).size < 32 << 20 ? [p] : [];
  });
}

const ENV_APP = `
import os
from pyspark.sql import SparkSession
for k, v in sorted(os.environ.items()):
    print("DRIVER-ENV %s=%s" % (k, v))
spark = SparkSession.builder.getOrCreate()
print("JVM-ENV " + spark.sparkContext._jvm.java.lang.System.getenv().toString())
worker = spark.sparkContext.parallelize([0], 1).map(lambda _: sorted(os.environ.items())).collect()[0]
for k, v in worker:
    print("WORKER-ENV %s=%s" % (k, v))
print("ENV-DUMP-DONE")
spark.stop()
`;

describe("a driver's environment", () => {
  it('shows a job nothing of the service: not in its driver, its JVM, its Python workers, nor its folder', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        { name: 'print-env', language: 'PYTHON', jobClass: 'envdump', driverMemory: '512m' },
        { pyFiles: [{ name: 'envdump.py', content: ENV_APP }] },
      ),
    );
    expect(r.status).toBe(200);
    const job = await waitEnded(r.body.jobId);
    const logs = await logText(r.body.jobId);
    expect(job.state, logs.slice(-3000)).toBe('FINISHED');
    // The dump ran, and the driver still had what it needs.
    expect(logs).toContain('ENV-DUMP-DONE');
    expect(logs).toMatch(/DRIVER-ENV PATH=/);
    expect(logs).toMatch(/DRIVER-ENV SPARK_HOME=/);
    expect(logs).toMatch(/JVM-ENV \{.*PATH=/);
    expect(logs).toMatch(/WORKER-ENV PATH=/);
    expect(leaked(logs)).toEqual([]);
    for (const name of Object.keys(SERVICE_ENV)) expect(logs).not.toMatch(new RegExp(`-ENV ${name}=`));

    const folder = path.join(h.config.DRIVER_DIR, `job-${r.body.jobId}-1`);
    const files = filesUnder(folder);
    expect(files.map((f) => path.basename(f))).toContain('driver.log');
    for (const f of files) expect(leaked(readFileSync(f, 'latin1')), f).toEqual([]);
  });

  it("gives a group's runner only its own direct-channel secret", async () => {
    const g = await call(
      h,
      'POST',
      '/group',
      form({ name: 'env-runner', kind: 'CODE', language: 'PYTHON', scale: '1', driverMemory: '512m' }),
    );
    expect(g.status).toBe(200);
    const groupId = g.body.groupId;
    const ready = await eventually(
      async () => {
        const jobs = (await call(h, 'GET', `/group/${groupId}?jobStates=READY`)).body.jobs as { jobId: string }[];
        return jobs.length === 1 ? jobs[0] : undefined;
      },
      180_000,
      500,
    );
    const x = await call(h, 'POST', `/group/${groupId}/job/execute`, {
      type: 'interactive_code_execute',
      code: 'import os, json\njson.dumps(dict(os.environ))',
    });
    expect(x.status, JSON.stringify(x.body)).toBe(200);
    const env = JSON.parse(x.body.result as string) as Record<string, string>;
    expect(env.RUNNER_INSTANCE_ID).toBe(ready.jobId);
    expect(env.TEMPORAL_ADDRESS).toBe(h.config.TEMPORAL_ADDRESS);
    expect(env.RUNNER_DIRECT_SECRET).toBe(directSecret(SERVICE_ENV.SECRET_KEY, `inst-${ready.jobId}`));
    expect(leaked(JSON.stringify(env))).toEqual([]);
    for (const name of Object.keys(SERVICE_ENV)) expect(env[name], name).toBeUndefined();
    expect(leaked(await logText(ready.jobId))).toEqual([]);
    expect((await call(h, 'DELETE', `/group/${groupId}`)).status).toBe(200);
  });

  it('a job that links its driver.log to a file of the service reads nothing of it through its logs', async () => {
    // Stands for STACK_DIR/secret.key: a file the service can read, outside the driver's folder.
    const serviceFile = path.join(path.dirname(h.config.DRIVER_DIR), 'service.key');
    const marker = `Error: service-file-${hex(16)}`;
    writeFileSync(serviceFile, `${marker}\n`);
    const app = [
      'import os, sys',
      'print("BEFORE-SWAP")',
      'os.remove("driver.log")',
      `os.symlink(${JSON.stringify(serviceFile)}, "driver.log")`,
      'sys.exit(3)',
    ].join('\n');
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        { name: 'link-log', language: 'PYTHON', jobClass: 'swap' },
        { pyFiles: [{ name: 'swap.py', content: app }] },
      ),
    );
    expect(r.status).toBe(200);
    const job = await waitEnded(r.body.jobId);
    expect(job.state).toBe('FAILED');
    expect(JSON.stringify(job)).not.toContain(marker.slice('Error: '.length));
    expect(await logText(r.body.jobId)).not.toContain(marker.slice('Error: '.length));
  });
});
