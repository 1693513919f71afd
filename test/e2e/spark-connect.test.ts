// Spark Connect end to end: the real pyspark 3.5.7 client (testkit/connect_client.py, from the venv)
// → the gateway's TLS port with an API key → a real Spark Connect server launched by its workflow on the local
// cluster. DataFrames, SQL, a Python UDF, a large collect, an error's message, two users, refused tokens, a
// killed server and a restarted gateway; and one query from the JVM client (testkit/connect-jvm). The clients' output goes to a file, printed when a test fails.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Document } from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startConnectGateway, type RunningGateway } from '../../api/connect/gateway';
import { stopServer } from '../../api/connect/stop';
import type { ApiDeps } from '../../api/deps';
import { connectServerId, type ConnectServerRecord } from '../../domain/connect';
import { connectServerSecret } from '../../lib/driver-secret';
import { Collections } from '../../lib/mongo';
import { ConnectClient } from '../../testkit/connect-client';
import { call, eventually, startHarness, type Harness } from '../harness';

const ADMIN_KEY = 'connect-test-admin-key-0123456789abcdef';
let h: Harness;
let deps: ApiDeps;
let gw: RunningGateway;
let logFile: string;
const keys: Record<string, string> = {};
const clients: ConnectClient[] = [];

const url = (key?: string, extra = '') => `${gw.url}/${key === undefined ? ';use_ssl=true' : `;token=${key}`}${extra}`;
const client = () => {
  const c = new ConnectClient({ python: h.config.PYTHON, caFile: h.config.CONNECT_TLS_CERT, logFile });
  clients.push(c);
  return c;
};
const server = () =>
  h.store
    .col<ConnectServerRecord & Document>(Collections.connectServers)
    .findOne({ _id: connectServerId('default') } as Document);
const audit = (path: string, resourceId: string) =>
  h.store.col(Collections.audit).findOne({ path, resourceId } as Document);

/** A command's stdout; on failure, an error with its stderr's last lines (the JVM client's stack trace). */
const run = (cmd: string, args: string[]) =>
  new Promise<string>((resolve, reject) =>
    execFile(cmd, args, { maxBuffer: 16 * 2 ** 20, timeout: 50_000 }, (err, stdout, stderr) =>
      err
        ? reject(new Error(`${cmd} failed: ${err.message}\n${stderr.split('\n').slice(-40).join('\n')}`))
        : resolve(stdout),
    ),
  );

/** An SSE stream of the API read as a viewer until stop(), which returns the events' data. */
function sse(p: string) {
  const abort = new AbortController();
  const events: Record<string, unknown>[] = [];
  const done = (async () => {
    const res = await fetch(`${h.url}${p}`, {
      headers: { authorization: `Bearer ${keys.carol}`, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const data = buf
          .slice(0, i)
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('');
        buf = buf.slice(i + 2);
        if (data) events.push(JSON.parse(data) as Record<string, unknown>);
      }
    }
  })().catch((e: unknown) => {
    if ((e as Error).name !== 'AbortError') throw e;
  });
  return {
    stop: async () => {
      await new Promise((r) => setTimeout(r, 500));
      abort.abort();
      await done;
      return events;
    },
  };
}

beforeAll(async () => {
  h = await startHarness({
    env: { AUTH_MODE: 'on', AUTH_ADMIN_KEY: ADMIN_KEY, CONNECT_START_TIMEOUT_MS: '120000' },
  });
  logFile = path.join(path.dirname(h.config.DRIVER_DIR), 'connect-clients.log');
  for (const [name, role] of [
    ['alice', 'operator'],
    ['bob', 'operator'],
    ['carol', 'viewer'],
  ]) {
    const r = await call(h, 'POST', '/auth/keys', { name, role }, { authorization: `Bearer ${ADMIN_KEY}` });
    expect(r.status).toBe(200);
    keys[name] = r.body.key;
  }
  deps = { config: h.config, store: h.store, temporal: h.temporal };
  gw = await startConnectGateway(deps, { port: 0 });
}, 120_000);

afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') {
    let text = '';
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      // no client ran
    }
    console.error(
      `--- Connect clients' output (${logFile}), last 150 lines:\n${text.split('\n').slice(-150).join('\n')}`,
    );
  }
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.close();
  // The server is a driver of this harness: it stops with it.
  if (h) await stopServer(deps, 'default', 'the test ended').catch(() => undefined);
  await h?.stop();
}, 60_000);

describe('Spark Connect through the gateway', () => {
  it('runs DataFrame operations, SQL, a Python UDF and a large collect, and returns an error with its message', async () => {
    // The server's and sessions' states on their streams (SSE), as a viewer.
    const serverEvents = sse('/connect/server/updates?clusterNames=default');
    const sessionEvents = sse('/connect/session/updates');
    const alice = client();
    const first = await alice.connect(url(keys.alice));
    expect(first.ok).toBe(true);
    // The first call of the first session starts the cluster's server (its workflow) and waits for it.
    expect(await alice.value('result = spark.range(10).filter("id % 2 = 0").count()')).toBe(5);
    expect((await server())?.state).toBe('RUNNING');

    expect(
      await alice.value(`
from pyspark.sql import functions as F
df = spark.createDataFrame([("a", 1), ("b", 2), ("a", 3)], ["k", "v"])
result = sorted([tuple(r) for r in df.groupBy("k").agg(F.sum("v").alias("s")).collect()])`),
    ).toEqual([
      ['a', 4],
      ['b', 2],
    ]);
    expect(
      await alice.value(`
spark.range(5).createOrReplaceTempView("nums")
result = spark.sql("select sum(id) as total from nums where id > 1").collect()[0]["total"]`),
    ).toBe(9);
    expect(
      await alice.value(`
from pyspark.sql.functions import udf
plus = udf(lambda x: x * 10 + 1, "long")
result = [r[0] for r in spark.range(3).select(plus("id")).collect()]`),
    ).toEqual([1, 11, 21]);
    // Nothing a session's code can read holds the server's secret (with it, a UDF could call other principals'
    // sessions around the gateway): not its worker's environment, not the server JVM's, not the server's folder.
    const server0 = (await server())!;
    const secret = connectServerSecret(h.config.SECRET_KEY!, server0.driverId!);
    expect(
      await alice.value(`
from pyspark.sql.functions import udf
def look(_):
    import os, glob
    seen = [os.environ.get(k, "") for k in os.environ]
    for f in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
        try:
            seen.append(open(f, "rb").read().decode("latin-1"))
        except Exception:
            pass
    for f in glob.glob(os.path.join(os.getcwd(), "**"), recursive=True):
        try:
            seen.append(open(f, "rb").read(65536).decode("latin-1"))
        except Exception:
            pass
    return "\\n".join(seen)
result = [r[0] for r in spark.range(1).select(udf(look, "string")("id")).collect()][0]`),
    ).not.toContain(secret);
    expect(existsSync(path.join(h.config.DRIVER_DIR, server0.driverId!, 'connect-secret'))).toBe(false);
    // ~32 MB of Arrow batches through the proxy.
    expect(
      await alice.value(`
pdf = spark.range(2_000_000).selectExpr("id", "id * 2 as x").toPandas()
result = [len(pdf), int(pdf["x"].sum())]`),
    ).toEqual([2_000_000, 2 * ((2_000_000 * 1_999_999) / 2)]);

    const err = await alice.run('spark.sql("select * from no_such_table").collect()');
    expect(err.ok).toBe(false);
    if (!err.ok) {
      expect(err.error).toBe('AnalysisException');
      expect(err.message).toMatch(/TABLE_OR_VIEW_NOT_FOUND|no_such_table/);
    }
    // The session's start is audited, with its principal.
    const sessionId = (first as { result: { sessionId: string } }).result.sessionId;
    const start = await audit('/connect/session/start', sessionId);
    expect(start?.principal).toMatch(/^key:/);
    const servers0 = (await serverEvents.stop()).filter((e) => e.id === 'connect-default').map((e) => e.state);
    expect(servers0).toContain('STARTING');
    expect(servers0).toContain('RUNNING');
    expect(await sessionEvents.stop()).toContainEqual(expect.objectContaining({ id: sessionId, state: 'ACTIVE' }));
    // A viewer sees the cluster's server and the session through REST.
    const asViewer = { authorization: `Bearer ${keys.carol}` };
    const servers = await call(h, 'GET', '/connect/server/default', undefined, asViewer);
    expect(servers.status).toBe(200);
    expect(servers.body).toMatchObject([{ id: 'connect-default', clusterName: 'default', state: 'RUNNING' }]);
    expect(servers.body[0]).not.toHaveProperty('endpoint');
    // Its Spark UI through the API, for a viewer (its sessions' queries are its stages); nobody else.
    expect(servers.body[0].uiUrl).toBe('/api/v1/connect/server/connect-default/ui/');
    const apps = await call(h, 'GET', '/connect/server/connect-default/ui/api/v1/applications', undefined, asViewer);
    expect(apps.status, JSON.stringify(apps.body)).toBe(200);
    const appId = (apps.body as { id: string }[])[0].id;
    const stages = await call(
      h,
      'GET',
      `/connect/server/connect-default/ui/api/v1/applications/${appId}/stages`,
      undefined,
      asViewer,
    );
    expect((stages.body as { status: string }[]).some((st) => st.status === 'COMPLETE')).toBe(true);
    expect((await call(h, 'GET', '/connect/server/connect-default/ui/api/v1/applications')).status).toBe(401);
    const listed = await call(h, 'GET', '/connect/session/default', undefined, asViewer);
    expect(listed.body).toContainEqual(
      expect.objectContaining({
        id: sessionId,
        principal: start?.principal,
        state: 'ACTIVE',
        serverId: 'connect-default',
      }),
    );
  }, 240_000);

  it("keeps two users' sessions apart, and refuses one user another's session", async () => {
    const [a, b] = [client(), client()];
    const [sa, sb] = await Promise.all([a.connect(url(keys.alice)), b.connect(url(keys.bob))]);
    expect(sa.ok && sb.ok).toBe(true);
    await Promise.all([
      a.value('spark.createDataFrame([(1,)], ["who"]).createOrReplaceTempView("mine")'),
      b.value('spark.createDataFrame([(2,), (3,)], ["who"]).createOrReplaceTempView("mine")'),
    ]);
    expect(await a.value('result = spark.table("mine").count()')).toBe(1);
    expect(await b.value('result = spark.table("mine").count()')).toBe(2);
    const aliceSession = (sa as { result: { sessionId: string } }).result.sessionId;
    const thief = client();
    await thief.connect(url(keys.bob, `;session_id=${aliceSession}`));
    const stolen = await thief.run('result = spark.table("mine").count()');
    expect(stolen).toMatchObject({ ok: false, code: 'StatusCode.PERMISSION_DENIED' });
    if (!stolen.ok) expect(stolen.message).toMatch(/belongs to another principal/);
  }, 120_000);

  it('runs a query from the JVM Connect client (spark-connect-client-jvm 4.0.0)', async () => {
    // testkit/connect-jvm, built by scripts/setup-connect.sh; the gateway's certificate in a trust store of its own.
    const dir = path.dirname(logFile);
    const trustStore = path.join(dir, 'connect-gateway.p12');
    if (!existsSync(trustStore)) {
      mkdirSync(dir, { recursive: true });
      await run('keytool', [
        '-importcert',
        '-noprompt',
        '-alias',
        'gateway',
        '-file',
        h.config.CONNECT_TLS_CERT,
        '-keystore',
        trustStore,
        '-storetype',
        'PKCS12',
        '-storepass',
        'changeit',
      ]);
    }
    const cache = path.dirname(path.dirname(h.config.SPARK_CONNECT_JAR));
    const classpath = [
      path.join(h.config.STACK_DIR, 'jvm', 'connect-jvm-client.jar'),
      path.join(cache, 'spark-connect-client-jvm-4.0.0', '*'),
    ].join(':');
    const out = await run('java', [
      `-Djavax.net.ssl.trustStore=${trustStore}`,
      '-Djavax.net.ssl.trustStorePassword=changeit',
      // Arrow's memory (the results' batches) on Java 17.
      '--add-opens=java.base/java.nio=ALL-UNNAMED',
      '-cp',
      classpath,
      'ConnectJvmClient',
      `${gw.url}/;use_ssl=true;token=${keys.alice}`,
    ]);
    expect(JSON.parse(out)).toEqual({ one: 1, range: [0, 1, 2, 3, 4] });
  }, 60_000);

  it('refuses a wrong or missing token (UNAUTHENTICATED) and a viewer (PERMISSION_DENIED)', async () => {
    const c = client();
    await c.connect(url('not-a-key-of-this-service'));
    const wrong = await c.run('result = spark.range(1).count()');
    expect(wrong).toMatchObject({ ok: false, code: 'StatusCode.UNAUTHENTICATED' });
    if (!wrong.ok) expect(wrong.message).toMatch(/unknown or has been revoked/);
    await c.connect(url(undefined));
    const missing = await c.run('result = spark.range(1).count()');
    expect(missing).toMatchObject({ ok: false, code: 'StatusCode.UNAUTHENTICATED' });
    if (!missing.ok) expect(missing.message).toMatch(/authentication required/);
    await c.connect(url(keys.carol));
    const viewer = await c.run('result = spark.range(1).count()');
    expect(viewer).toMatchObject({ ok: false, code: 'StatusCode.PERMISSION_DENIED' });
    if (!viewer.ok) expect(viewer.message).toMatch(/needs the operator role/);
  }, 60_000);

  it('ends a session on request: its next call fails saying so', async () => {
    const c = client();
    const opened = await c.connect(url(keys.bob));
    expect(await c.value('result = spark.range(2).count()')).toBe(2);
    const sessionId = (opened as { result: { sessionId: string } }).result.sessionId;
    const del = await call(h, 'DELETE', `/connect/session/${sessionId}`, undefined, {
      authorization: `Bearer ${keys.bob}`,
    });
    expect(del.status).toBe(200);
    // The gateway learns it within its sweep (5 s).
    await new Promise((r) => setTimeout(r, 6_000));
    const after = await c.run('result = spark.range(2).count()');
    expect(after).toMatchObject({ ok: false, code: 'StatusCode.FAILED_PRECONDITION' });
    if (!after.ok) expect(after.message).toMatch(/ended on request by key:/);
    expect(
      (await call(h, 'DELETE', `/connect/session/${sessionId}`, undefined, { authorization: `Bearer ${keys.bob}` }))
        .status,
    ).toBe(404);
  }, 60_000);

  it("releases an idle session and one whose client left, stops the server with no session, and stops a deleted cluster's", async () => {
    const admin = { authorization: `Bearer ${ADMIN_KEY}` };
    const made = await call(h, 'POST', '/cluster', { name: 'connect-idle', type: 'local' }, admin);
    expect(made.status).toBe(200);
    const clusterId = made.body.clusterId as string;
    // A gateway of the same service with short idle settings (a new server takes the idle time of its start).
    // Idle for longer than pyspark's first DataFrame call takes on a loaded machine (it imports pandas and pyarrow).
    const config = { ...h.config, CONNECT_SESSION_IDLE_MS: 6_000, CONNECT_IDLE_MS: 4_000 };
    const gw2 = await startConnectGateway({ ...deps, config }, { port: 0, graceMs: 1_000 });
    const url2 = `${gw2.url}/;token=${keys.alice};cluster=connect-idle`;
    const sessionDoc = (id: string) => h.store.col(Collections.connectSessions).findOne({ _id: id } as Document);
    try {
      const a = client();
      const sa = (await a.connect(url2)) as { result: { sessionId: string } };
      expect(await a.value('result = spark.range(3).count()')).toBe(3);
      await new Promise((r) => setTimeout(r, 7_500));
      const idle = await a.run('result = spark.range(3).count()');
      expect(idle).toMatchObject({ ok: false, code: 'StatusCode.FAILED_PRECONDITION' });
      if (!idle.ok) expect(idle.message).toMatch(/no call for 6 s \(CONNECT_SESSION_IDLE_MS\)/);
      expect(await audit('/connect/session/end', sa.result.sessionId)).toMatchObject({
        reason: expect.stringMatching(/no call/),
      });

      const b = client();
      const sb = (await b.connect(url2)) as { result: { sessionId: string } };
      expect(await b.value('result = spark.range(2).count()')).toBe(2);
      await b.close();
      await eventually(async () =>
        expect(await sessionDoc(sb.result.sessionId)).toMatchObject({
          state: 'ENDED',
          endReason: 'its client disconnected',
        }),
      );
      await a.close();
      // No session left: the server stops itself after CONNECT_IDLE_MS.
      await eventually(async () =>
        expect((await call(h, 'GET', `/connect/server/${clusterId}`, undefined, admin)).body).toEqual([]),
      );
    } finally {
      await gw2.close();
    }
    // A server starting when its cluster is deleted stops with it.
    const started = await call(h, 'POST', `/connect/server/${clusterId}`, { async: true }, admin);
    expect(started.status).toBe(200);
    expect((await call(h, 'DELETE', `/cluster/${clusterId}`, undefined, admin)).status).toBe(200);
    expect(
      await h.store.col(Collections.connectServers).findOne({ _id: `connect-${clusterId}` } as Document),
    ).toBeNull();
  }, 240_000);

  it('lets clients go on through a restarted gateway', async () => {
    const c = client();
    await c.connect(url(keys.alice));
    await c.value('spark.range(3).createOrReplaceTempView("kept")');
    const port = gw.port;
    await gw.close();
    gw = await startConnectGateway(deps, { port });
    // The same session, on the same server: its temporary view is still there.
    expect(await c.value('result = spark.table("kept").count()')).toBe(3);
  }, 60_000);

  it('fails a session whose server was killed clearly, and a new session works on the restarted server', async () => {
    const c = client();
    const opened = await c.connect(url(keys.alice));
    expect(await c.value('result = spark.range(4).count()')).toBe(4);
    const before = (await server())!;
    const pid = Number(readFileSync(path.join(h.config.DRIVER_DIR, before.driverId!, 'pid'), 'utf8').trim());
    process.kill(-pid, 'SIGKILL');
    const failed = await c.run('result = spark.range(4).count()');
    expect(failed).toMatchObject({ ok: false, code: 'StatusCode.FAILED_PRECONDITION' });
    if (!failed.ok) expect(failed.message).toMatch(/has ended: its Spark Connect server .* stopped or died/);
    // Still failing clearly, not a new empty session on the next server.
    expect(await c.run('result = 1; spark.range(1).count()')).toMatchObject({
      ok: false,
      code: 'StatusCode.FAILED_PRECONDITION',
    });

    await c.connect(url(keys.alice));
    expect(await c.value('result = spark.range(7).count()')).toBe(7);
    const after = (await server())!;
    expect(after.generation).toBeGreaterThan(before.generation);
    // The ended session's record says why.
    const sessionId = (opened as { result: { sessionId: string } }).result.sessionId;
    const ended = await h.store.col(Collections.connectSessions).findOne({ _id: sessionId } as Document);
    expect(ended).toMatchObject({ state: 'ENDED', driverId: before.driverId });
    expect(ended?.endReason).toMatch(/stopped or died/);
  }, 240_000);
});
