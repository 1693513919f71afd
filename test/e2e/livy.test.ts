// The Livy-compatible API end to end with real Spark: the PyPI `livy` client (from .stack/tools-venv) runs
// a pyspark session (code, its output, a DataFrame download, an error with its traceback) and a batch to
// success with its log; then the REST calls sparkmagic makes, with fetch, on an sql session (statements of
// each kind, an error, the log, a cancelled statement, delete).
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startLivy, type RunningLivy } from '../../api/livy/server';
import { ROOT } from '../../lib/config';
import { request } from '../../testkit/http';
import { eventually, startHarness, type Harness } from '../harness';

const TOOLS_PYTHON = path.join(ROOT, '.stack', 'tools-venv', 'bin', 'python');

/** Drives the server with the livy package's own high-level classes, printing what it saw as JSON. */
const CLIENT_PY = `
import json, sys
from livy import LivySession, LivyBatch, SessionKind
from livy.models import SparkRuntimeError

url, batch_file = sys.argv[1], sys.argv[2]
out = {}
with LivySession.create(url, kind=SessionKind.PYSPARK) as session:
    out["state"] = session.state.value
    out["value"] = session.run("x = spark.range(10).count()\\nx * 2").text
    session.run("df = spark.createDataFrame([(1, 'a'), (2, 'b')], ['n', 's'])")
    out["rows"] = session.download("df").to_dict(orient="records")
    try:
        session.run("1 / 0")
        out["error"] = None
    except SparkRuntimeError as e:
        out["error"] = {"ename": e.ename, "evalue": e.evalue, "traceback": e.traceback}
batch = LivyBatch.create(url, batch_file, args=["7"])
out["batch"] = batch.wait().value
out["batchLog"] = batch.log(from_=0, size=100000)
print(json.dumps(out))
`;

const BATCH_PY = `
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
n = int(sys.argv[1])
print("LIVY-SUM", spark.sparkContext.parallelize(range(1, n + 1)).sum())
# spark-submit copies a PySpark driver's output from a pipe and may exit before copying what is still
# buffered at the end: flushed now, the line is copied while Spark stops.
sys.stdout.flush()
spark.stop()
`;

let h: Harness;
let livy: RunningLivy;
let files: string;
const call = (method: string, p: string, body?: unknown) => request(livy.url, method, p, body);

beforeAll(async () => {
  files = path.join(inject('testDir'), `livy-files-${randomUUID().slice(0, 8)}`);
  mkdirSync(files, { recursive: true });
  h = await startHarness({ env: { LIVY_LOCAL_DIRS: files } });
  livy = await startLivy({ config: h.config, store: h.store, temporal: h.temporal }, { port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await livy?.close();
  await h?.stop();
});

describe('Livy API without Spark', () => {
  it('answers GET /version, empty lists, 404 for unknown ids and 405 with Allow', async () => {
    expect((await call('GET', '/version')).body.version).toMatch(/^0\.\d+\.\d+/);
    expect((await call('GET', '/sessions')).body).toEqual({ from: 0, total: 0, sessions: [] });
    expect((await call('GET', '/batches')).body).toEqual({ from: 0, total: 0, sessions: [] });
    for (const p of ['/sessions/42', '/sessions/x', '/batches/42', '/batches/42/log', '/sessions/42/statements/0']) {
      const r = await call('GET', p);
      expect(r.status, p).toBe(404);
      expect(r.body.msg).toBe(r.body.message);
    }
    const r = await call('PUT', '/sessions');
    expect(r.status).toBe(405);
    expect(r.body.message).toContain('GET');
  });

  it('refuses bad bodies and files outside LIVY_LOCAL_DIRS with 400', async () => {
    expect((await call('POST', '/sessions', { kind: 'sparkr' })).status).toBe(400);
    expect((await call('POST', '/sessions', '{not json')).status).toBe(400);
    expect((await call('POST', '/batches', {})).status).toBe(400);
    expect((await call('POST', '/batches', { file: '/etc/passwd.py' })).status).toBe(400);
    expect((await call('POST', '/batches', { file: 's3a://bucket/x.py' })).status).toBe(400);
    writeFileSync(path.join(files, 'x.txt'), 'x');
    expect((await call('POST', '/batches', { file: path.join(files, 'x.txt') })).status).toBe(400);
    expect((await call('POST', '/batches', { file: path.join(files, '..', 'x.py') })).status).toBe(400);
    expect((await call('GET', '/batches?from=x')).status).toBe(400);
  });
});

describe('Livy API with real Spark', () => {
  it('the PyPI livy client runs a pyspark session and a batch', async () => {
    const script = path.join(files, 'client.py');
    const batchFile = path.join(files, 'sum_job.py');
    writeFileSync(script, CLIENT_PY);
    writeFileSync(batchFile, BATCH_PY);
    const { stdout } = await promisify(execFile)(TOOLS_PYTHON, [script, livy.url, batchFile], {
      timeout: 400_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(out.state).toBe('idle');
    expect(out.value).toBe('20');
    expect(out.rows).toEqual([
      { n: 1, s: 'a' },
      { n: 2, s: 'b' },
    ]);
    expect(out.error.ename).toBe('ZeroDivisionError');
    expect(out.error.evalue).toBe('division by zero');
    expect(out.error.traceback.join('')).toContain('ZeroDivisionError');
    expect(out.batch).toBe('success');
    expect(out.batchLog.join('\n')).toContain('LIVY-SUM 28');

    // The session is gone for Livy; its group is archived in the main API.
    const sessions = (await call('GET', '/sessions')).body;
    expect(sessions.total).toBe(0);
    const batches = (await call('GET', '/batches')).body;
    expect(batches.sessions[0]).toMatchObject({ id: 0, state: 'success' });
    const state = await call('GET', '/batches/0/state');
    expect(state.body).toEqual({ id: 0, state: 'success' });
    const tail = await call('GET', '/batches/0/log?size=5');
    expect(tail.body.log.length).toBeLessThanOrEqual(5);
    expect(tail.body.from + tail.body.log.length).toBe(tail.body.total);
  }, 420_000);

  it("sparkmagic's calls: create an sql session, wait for idle, run statements, read the log, delete", async () => {
    const created = await call('POST', '/sessions', { kind: 'sql', heartbeatTimeoutInSecond: 60, conf: {} });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'sql', state: 'starting', appInfo: {} });
    const id = created.body.id as number;
    await eventually(
      async () => {
        const s = await call('GET', `/sessions/${id}`);
        expect(s.body.state).toBe('idle');
        return true;
      },
      240_000,
      500,
    );
    const run = async (code: string, kind?: string) => {
      const st = await call('POST', `/sessions/${id}/statements`, { code, ...(kind ? { kind } : {}) });
      expect(st.status).toBe(201);
      expect(['waiting', 'running', 'available']).toContain(st.body.state);
      let body: any;
      await eventually(
        async () => {
          body = (await call('GET', `/sessions/${id}/statements/${st.body.id}`)).body;
          expect(body.state).toBe('available');
          return true;
        },
        120_000,
        200,
      );
      return body;
    };
    const sql = await run("select 1 as a, 'x' as b");
    expect(sql.output.status).toBe('ok');
    expect(sql.progress).toBe(1);
    expect(sql.output.data['application/json']).toEqual({
      schema: {
        type: 'struct',
        fields: [
          { name: 'a', type: 'integer', nullable: false, metadata: {} },
          { name: 'b', type: 'string', nullable: false, metadata: {} },
        ],
      },
      data: [[1, 'x']],
    });
    const py = await run('print(spark.version)', 'pyspark');
    expect(py.output.data['text/plain']).toMatch(/^3\.\d+\.\d+/);
    const bad = await run('select * from no_such_table');
    expect(bad.output).toMatchObject({ status: 'error', ename: expect.stringContaining('AnalysisException') });
    expect((await call('POST', `/sessions/${id}/statements`, { code: '1', kind: 'spark' })).status).toBe(400);

    const list = (await call('GET', `/sessions/${id}/statements`)).body;
    expect(list.total_statements).toBe(3);
    expect(list.statements.map((s: { id: number }) => s.id)).toEqual([0, 1, 2]);
    const log = (await call('GET', `/sessions/${id}/log?from=0&size=1000`)).body;
    expect(log.id).toBe(id);
    expect(log.total).toBeGreaterThan(0);

    // A long statement, cancelled: it reads as cancelled, with no output.
    const slow = await call('POST', `/sessions/${id}/statements`, {
      code: "sc.parallelize(range(2), 2).map(lambda x: __import__('time').sleep(60)).count()",
      kind: 'pyspark',
    });
    expect((await call('POST', `/sessions/${id}/statements/${slow.body.id}/cancel`)).body).toEqual({ msg: 'canceled' });
    const cancelled = (await call('GET', `/sessions/${id}/statements/${slow.body.id}`)).body;
    expect(cancelled).toMatchObject({ state: 'cancelled', output: null });

    expect((await call('DELETE', `/sessions/${id}`)).body).toEqual({ msg: 'deleted' });
    expect((await call('GET', `/sessions/${id}`)).status).toBe(404);
  }, 420_000);
});
