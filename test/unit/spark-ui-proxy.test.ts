// The Spark UI proxy's rules without Spark: which paths pass (attacker spellings do not), which History
// Server paths belong to a job, how redirects stay under the proxy, what a proxied request carries (none of
// the caller's credentials) against an in-process stand-in for a driver's UI, the links records carry, and
// the files of a local driver the proxy and the History Server read (in a temporary folder).
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanPath, cleanQuery, historyPathAllowed, liveUiPathAllowed } from '../../api/spark-ui/paths';
import { proxy, rewriteLocation } from '../../api/spark-ui/proxy';
import { apiBaseUrl, engineLinks, jobLinks, livyAppInfo } from '../../api/spark-ui/links';
import { jobDriverId, jobSubject } from '../../api/spark-ui/service';
import {
  issueSession,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  sessionPrincipal,
  startSession,
  verifySession,
} from '../../api/spark-ui/session';
import type { AuthDeps } from '../../api/auth/authenticate';
import { DRIVER_FILES } from '../../activities/adapters/local/driver-files';
import { linkHistory, readUiAddress, uiFile, uiMac } from '../../activities/adapters/local/spark-ui';
import { ApiError } from '../../api/errors';
import { historyServerCommand } from '../../scripts/history-server';

describe('cleanPath', () => {
  it.each(['', '/', '/jobs/', '/stages/stage/', '/api/v1/applications/local-1/stages', '/static/webui.css'])(
    'passes %j',
    (p) => expect(cleanPath(p)).toBe(p === '' ? '/' : p),
  );
  it.each([
    '/..',
    '/../auth/keys',
    '/jobs/../../auth',
    '/./jobs',
    '/%2e%2e/x',
    '/%2E%2E%2Fauth',
    '/..%2f..%2fauth',
    '/%252e%252e/',
    '//127.0.0.1:8233/',
    '/http://evil.example/',
    '/a//b',
    '/..\\..\\auth',
    '/jobs/\u0000',
    '/jobs/\r\nX: y',
    // Jetty strips `;` path parameters before it resolves dot segments.
    '/static/..;/history/local-2/jobs/',
    '/history/local-1/..;/..;/api/v1/applications',
    '/.;/jobs/',
    '/jobs;x=1/',
    'jobs/',
    'http://evil.example/',
  ])('refuses %j', (p) => expect(cleanPath(p)).toBeUndefined());

  it('passes plain queries only', () => {
    expect(cleanQuery('id=1&attempt=0')).toBe('id=1&attempt=0');
    expect(cleanQuery('status=failed%20x')).toBe('status=failed%20x');
    expect(cleanQuery('a=<script>')).toBeUndefined();
    expect(cleanQuery('a=1\r\nb')).toBeUndefined();
  });
});

describe('paths of a job', () => {
  it('the History Server: only its own application and the static files', () => {
    const app = 'local-1795670930773';
    for (const p of [`/history/${app}`, `/history/${app}/jobs/`, `/api/v1/applications/${app}/stages`, '/static/a.js'])
      expect(historyPathAllowed(p, app)).toBe(true);
    for (const p of [
      '/',
      '/api/v1/applications',
      `/history/${app}0/jobs/`,
      `/api/v1/applications/${app}x`,
      '/history/local-1/jobs/',
      '/api/v1/version',
      '/logPage/',
    ])
      expect(historyPathAllowed(p, app)).toBe(false);
  });

  it('the live UI: no kill paths', () => {
    expect(liveUiPathAllowed('/jobs/job/kill/')).toBe(false);
    expect(liveUiPathAllowed('/stages/stage/kill')).toBe(false);
    expect(liveUiPathAllowed('/jobs/job/')).toBe(true);
  });
});

describe('rewriteLocation', () => {
  const t = { host: '127.0.0.1', port: 45123, context: '/api/v1/job/j1/ui' };
  it('keeps redirects of the UI under the proxy', () => {
    expect(rewriteLocation('http://127.0.0.1:45123/jobs/', t)).toBe('/api/v1/job/j1/ui/jobs/');
    expect(rewriteLocation('/jobs/?x=1', t)).toBe('/api/v1/job/j1/ui/jobs/?x=1');
    expect(rewriteLocation('http://127.0.0.1:45123/api/v1/job/j1/ui/stages/', t)).toBe('/api/v1/job/j1/ui/stages/');
  });
  it('drops redirects elsewhere', () => {
    expect(rewriteLocation('http://evil.example/jobs/', t)).toBeUndefined();
    expect(rewriteLocation('http://127.0.0.1:9888/api/v1/auth/keys', t)).toBeUndefined();
    expect(rewriteLocation('//evil.example/x', t)).toBeUndefined();
  });
});

describe('proxy', () => {
  let upstream: http.Server;
  let api: http.Server;
  let seen: http.IncomingHttpHeaders = {};
  let seenPath = '';
  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      seen = req.headers;
      seenPath = req.url ?? '';
      if (req.url === '/') {
        res.writeHead(302, { location: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/jobs/` });
        return res.end();
      }
      res.writeHead(200, {
        'content-type': 'text/html',
        'set-cookie': 'JSESSIONID=1',
        'x-frame-options': 'x',
        'cache-control': 'public, max-age=86400',
      });
      res.end('<a href="/api/v1/job/j1/ui/stages/">stages</a>');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as AddressInfo).port;
    const app = new Koa();
    app.use((ctx) =>
      proxy(ctx, {
        host: '127.0.0.1',
        port,
        path: ctx.path.replace('/api/v1/job/j1/ui', '') || '/',
        context: '/api/v1/job/j1/ui',
        what: 'job j1',
      }),
    );
    api = http.createServer(app.callback());
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  });
  afterAll(() => {
    upstream.close();
    api.close();
  });
  const base = () => `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1/job/j1/ui`;

  it('forwards none of the caller’s credentials or forwarding headers; passes Spark its context', async () => {
    const res = await fetch(`${base()}/jobs/`, {
      headers: {
        authorization: 'Bearer secret-key',
        'x-api-key': 'secret-key',
        cookie: 'session=1',
        'x-forwarded-context': '/evil',
        'x-forwarded-for': '1.2.3.4',
      },
    });
    expect(res.status).toBe(200);
    expect(seenPath).toBe('/jobs/');
    expect(seen.authorization).toBeUndefined();
    expect(seen['x-api-key']).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(seen['x-forwarded-for']).toBeUndefined();
    expect(seen['x-forwarded-context']).toBe('/api/v1/job/j1/ui');
    expect(res.headers.get('set-cookie')).toBeNull();
    // The upstream's own caching is not trusted for a signed-in caller's page.
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    expect(res.headers.get('content-security-policy')).toMatch(/^sandbox allow-scripts/);
    expect(await res.text()).toContain('/api/v1/job/j1/ui/stages/');
  });

  it('keeps the UI’s redirect under the proxy', async () => {
    const res = await fetch(`${base()}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/api/v1/job/j1/ui/jobs/');
  });
});

describe('proxy against an upstream that refuses, stalls or trickles', () => {
  let upstream: http.Server;
  let api: http.Server;
  let freePortNumber = 0;
  const closed: string[] = [];
  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      req.on('close', () => closed.push(req.url ?? ''));
      // /stall never answers; /trickle sends its headers, then a byte every 50 ms, forever.
      if (req.url === '/trickle') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const t = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(t));
      }
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as AddressInfo).port;
    // A port nothing listens on: one that was free a moment ago.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    freePortNumber = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (e) {
        ctx.status = e instanceof ApiError ? e.status : 500;
        ctx.body = { message: (e as Error).message };
      }
    });
    app.use((ctx) =>
      proxy(ctx, {
        host: '127.0.0.1',
        port: ctx.path.startsWith('/refused') ? freePortNumber : port,
        path: ctx.path.replace(/^\/refused(-history)?/, '') || '/',
        context: '/api/v1/job/j1/ui',
        what: 'job j1',
        ...(ctx.path.startsWith('/refused-history') ? {} : { refused: 'job j1 has no UI up' }),
        deadlineMs: 400,
      }),
    );
    api = http.createServer(app.callback());
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  });
  afterAll(() => {
    upstream.closeAllConnections();
    upstream.close();
    api.closeAllConnections();
    api.close();
  });
  const url = (p: string) => `http://127.0.0.1:${(api.address() as AddressInfo).port}${p}`;

  it('a driver UI that refuses the connection is a 404 with a message; the History Server down is a 503', async () => {
    const res = await fetch(url('/refused/jobs/'));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'job j1 has no UI up' });
    const hs = await fetch(url('/refused-history/jobs/'));
    expect(hs.status).toBe(503);
    expect(((await hs.json()) as { message: string }).message).toMatch(/^job j1 does not answer/);
  });

  it('a caller that goes away takes the upstream request with it', async () => {
    const ac = new AbortController();
    const pending = fetch(url('/stall'), { signal: ac.signal }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    ac.abort();
    await pending;
    await expect.poll(() => closed.includes('/stall'), { timeout: 2000 }).toBe(true);
  });

  it('an upstream that stalls or trickles is cut off at the deadline, upstream and caller alike', async () => {
    const started = Date.now();
    const stalled = await fetch(url('/stall'));
    expect(stalled.status).toBe(503);
    expect(((await stalled.json()) as { message: string }).message).toMatch(/took too long/);
    const res = await fetch(url('/trickle'));
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000);
    await expect.poll(() => closed.filter((u) => u === '/trickle').length, { timeout: 2000 }).toBe(1);
  });
});

describe('links', () => {
  const job = { jobId: 'j1', jobType: 'SINGLE', appId: 'local-1' } as const;
  it('uiUrl while the driver runs, historyUrl once ended with an application', () => {
    expect(jobLinks({ ...job, state: 'BUSY' })).toEqual({ uiUrl: '/api/v1/job/j1/ui/' });
    expect(jobLinks({ ...job, state: 'FINISHED' })).toEqual({ historyUrl: '/api/v1/job/j1/history/' });
    expect(jobLinks({ ...job, state: 'FAILED', appId: undefined })).toEqual({});
    expect(jobLinks({ ...job, state: 'SUBMITTED' })).toEqual({});
    expect(jobLinks({ ...job, jobType: 'SHELL', state: 'BUSY' })).toEqual({});
    expect(engineLinks({ id: 'sparksql-c1', type: 'SPARK_SQL', state: 'RUNNING' }).uiUrl).toBe(
      '/api/v1/sql/engine/sparksql-c1/ui/',
    );
    expect(engineLinks({ id: 'trino-c1', type: 'TRINO', state: 'RUNNING' })).toEqual({});
    expect(engineLinks({ id: 'sparksql-c1', type: 'SPARK_SQL', state: 'STARTING' })).toEqual({});
  });
  it('Livy’s appInfo: absolute URLs on the REST API', () => {
    const url = apiBaseUrl({ config: { API_HOST: '0.0.0.0', API_PORT: 9888 } });
    expect(url).toBe('http://127.0.0.1:9888/api/v1');
    expect(livyAppInfo(url, { jobId: 'j1', uiUrl: '/api/v1/job/j1/ui/' })).toEqual({
      sparkUiUrl: 'http://127.0.0.1:9888/api/v1/job/j1/ui/',
      driverLogUrl: 'http://127.0.0.1:9888/api/v1/job/j1/logs',
    });
    expect(livyAppInfo(url, undefined)).toEqual({ sparkUiUrl: null, driverLogUrl: null });
  });
});

describe('a local driver’s UI address and history link (activities/adapters/local/spark-ui.ts)', () => {
  let tmp: string;
  let driver: string;
  let history: string;
  beforeAll(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'spark-ui-'));
    driver = path.join(tmp, 'drivers', 'job-x-1');
    history = path.join(tmp, 'spark-history');
    mkdirSync(path.join(driver, DRIVER_FILES.eventLog), { recursive: true });
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  const KEY = 'ab'.repeat(32);
  const read = () => readUiAddress(driver, 'job-x-1', KEY);

  it('reads only a loopback address on an unprivileged port from a regular file', async () => {
    const ui = path.join(driver, DRIVER_FILES.ui);
    writeFileSync(ui, uiFile(45123, 'job-x-1', KEY));
    expect(await read()).toEqual({ host: '127.0.0.1', port: 45123 });
    for (const bad of [
      { host: '10.0.0.1', port: 45123 },
      { host: '127.0.0.1', port: 22 },
      { host: '127.0.0.1', port: 70000 },
      { host: '127.0.0.1', port: '45123' },
    ]) {
      writeFileSync(ui, JSON.stringify({ ...bad, mac: uiMac(KEY, 'job-x-1', Number(bad.port)) }));
      expect(await read()).toBeUndefined();
    }
    rmSync(ui);
    writeFileSync(path.join(tmp, 'elsewhere'), uiFile(45124, 'job-x-1', KEY));
    symlinkSync(path.join(tmp, 'elsewhere'), ui);
    expect(await read()).toBeUndefined();
    rmSync(ui);
  });

  it('refuses a file the job rewrote to send the proxy to another loopback port (Temporal, MongoDB, the API)', async () => {
    const ui = path.join(driver, DRIVER_FILES.ui);
    const sealed = JSON.parse(uiFile(45123, 'job-x-1', KEY));
    for (const forged of [
      // Another port with the seal of the recorded one.
      { ...sealed, port: 7233 },
      { host: '127.0.0.1', port: 27017 },
      { host: '127.0.0.1', port: 9888, mac: '' },
      // Copied from another driver's folder, or sealed with another key.
      JSON.parse(uiFile(45123, 'job-y-1', KEY)),
      JSON.parse(uiFile(45123, 'job-x-1', 'cd'.repeat(32))),
      // Written by a launch that had no key: never proxied.
      JSON.parse(uiFile(45123, 'job-x-1', undefined)),
    ]) {
      writeFileSync(ui, JSON.stringify(forged));
      expect({ forged, address: await read() }).toEqual({ forged, address: undefined });
    }
    writeFileSync(ui, 'x'.repeat(10_000));
    expect(await read()).toBeUndefined();
    rmSync(ui);
  });

  it('links the application’s own rolling log once, never a link the driver put there, and prunes dangling links', async () => {
    const appId = 'local-1795670930773';
    // A link the job made in its own eventlog/ is not followed into the History Server's folder.
    symlinkSync('/etc', path.join(driver, DRIVER_FILES.eventLog, `eventlog_v2_${appId}`));
    await linkHistory(driver, appId, history);
    expect(existsSync(history) ? readdirSync(history) : []).toEqual([]);
    rmSync(path.join(driver, DRIVER_FILES.eventLog, `eventlog_v2_${appId}`));

    mkdirSync(path.join(driver, DRIVER_FILES.eventLog, `eventlog_v2_${appId}`));
    mkdirSync(history, { recursive: true });
    symlinkSync(path.join(tmp, 'gone'), path.join(history, 'eventlog_v2_local-1'));
    await linkHistory(driver, appId, history);
    await linkHistory(driver, appId, history);
    expect(readdirSync(history)).toEqual([`eventlog_v2_${appId}`]);
    expect(readlinkSync(path.join(history, `eventlog_v2_${appId}`))).toBe(
      path.join(driver, DRIVER_FILES.eventLog, `eventlog_v2_${appId}`),
    );
  });

  it('links nothing for an application id that is no plain name (the job writes the files it is read from)', async () => {
    const evil = 'local-1/../../escaped';
    mkdirSync(path.join(driver, DRIVER_FILES.eventLog, `eventlog_v2_${evil}`), { recursive: true });
    await linkHistory(driver, evil, history);
    expect(existsSync(path.join(tmp, 'escaped'))).toBe(false);
    expect(readdirSync(history)).toEqual(['eventlog_v2_local-1795670930773']);
  });

  it('finds the driver of a single job’s try and of a group instance', () => {
    expect(jobDriverId({ jobId: 'abc', jobType: 'SINGLE', attempt: 2 })).toBe('job-abc-2');
    expect(jobDriverId({ jobId: 'abc', jobType: 'INTERACTIVE' })).toBe('inst-abc');
    expect(jobDriverId({ jobId: 'abc', jobType: 'SHELL' })).toBeUndefined();
  });

  it('reads the subject from the job’s record: a record without tries is on its first; unknown ids are 404s', async () => {
    const docs: Record<string, object> = {
      abc: { jobType: 'SINGLE', state: 'BUSY' },
      ended: { jobType: 'SINGLE', state: 'FINISHED', attempt: 2, appId: 'local-1' },
    };
    const store = {
      col: () => ({ findOne: async (q: { _id: string }) => docs[q._id] ?? null }),
    } as unknown as Parameters<typeof jobSubject>[0]['store'];
    expect(await jobSubject({ store }, 'abc')).toMatchObject({ driverId: 'job-abc-1', live: true });
    expect(await jobSubject({ store }, 'ended')).toMatchObject({
      driverId: 'job-ended-2',
      live: false,
      appId: 'local-1',
    });
    for (const id of ['nope', '../auth', ''])
      await expect(jobSubject({ store }, id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('the Spark UI session cookie (api/spark-ui/session.ts)', () => {
  const KEY = 'ab'.repeat(32);
  const who = { id: 'key:k1', role: 'viewer' as const };
  it('holds who signed in and their role until it expires', () => {
    const now = 1_800_000_000_000;
    const v = issueSession(KEY, who, now);
    expect(verifySession(KEY, v, now + 1000)).toEqual(who);
    expect(verifySession(KEY, v, now + SESSION_TTL_MS)).toBeUndefined();
  });
  it('holds only while its API key does: revoked or gone, none; a changed role, the new one', async () => {
    const docs: Record<string, { role: string; revokedTime?: number }> = {
      k1: { role: 'viewer' },
      k2: { role: 'viewer', revokedTime: 1 },
      k3: { role: 'operator' },
    };
    const store = {
      col: () => ({ findOne: async (q: { _id: string }) => docs[q._id] ?? null }),
    } as unknown as AuthDeps['store'];
    expect(await sessionPrincipal({ store }, { id: 'key:k1', role: 'viewer' })).toEqual({
      id: 'key:k1',
      role: 'viewer',
    });
    expect(await sessionPrincipal({ store }, { id: 'key:k2', role: 'viewer' })).toBeUndefined();
    expect(await sessionPrincipal({ store }, { id: 'key:gone', role: 'admin' })).toBeUndefined();
    expect(await sessionPrincipal({ store }, { id: 'key:k3', role: 'admin' })).toEqual({
      id: 'key:k3',
      role: 'operator',
    });
    expect(await sessionPrincipal({ store }, { id: 'oidc:u1', role: 'viewer' })).toEqual({
      id: 'oidc:u1',
      role: 'viewer',
    });
    expect(await sessionPrincipal({ store }, undefined)).toBeUndefined();
  });

  it('is HttpOnly, SameSite=Lax, on the API path, and Secure behind a TLS-terminating proxy', async () => {
    const deps = {
      config: { SECRET_KEY: KEY },
      auth: { enabled: true, identify: async () => who },
    } as unknown as AuthDeps;
    const app = new Koa();
    app.use((ctx) => {
      ctx.state.principal = who;
      startSession(deps, ctx);
      ctx.body = '';
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const u = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const plain = (await fetch(u, { method: 'POST' })).headers.get('set-cookie') ?? '';
      expect(plain).toMatch(new RegExp(`^${SESSION_COOKIE}=[\\w-]+\\.[\\w-]+;`));
      expect(plain).toMatch(/; path=\/api\/v1\/;/);
      expect(plain).toMatch(/; samesite=lax/);
      expect(plain).toMatch(/; httponly/);
      expect(plain).not.toMatch(/; secure/);
      const behindTls = await fetch(u, { method: 'POST', headers: { 'x-forwarded-proto': 'https' } });
      expect(behindTls.headers.get('set-cookie')).toMatch(/; secure/);
    } finally {
      server.close();
    }
  });

  it('is refused when forged, altered, signed with another key, or malformed', () => {
    const now = 1_800_000_000_000;
    const v = issueSession(KEY, who, now);
    const [payload, mac] = v.split('.');
    const admin = Buffer.from(JSON.stringify({ p: 'key:k1', r: 'admin', e: now + 60_000 })).toString('base64url');
    for (const bad of [
      `${admin}.${mac}`,
      `${payload}.${mac.slice(0, -2)}AA`,
      issueSession('cd'.repeat(32), who, now),
      `${payload}`,
      `${payload}.${mac}.x`,
      '',
      undefined,
    ])
      expect(verifySession(KEY, bad, now)).toBeUndefined();
  });
});

describe('the History Server’s environment (scripts/history-server.ts)', () => {
  it('holds only the host’s basics and its own settings, never the service’s secrets', () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'spark-history-'));
    try {
      const { env } = historyServerCommand(
        {
          config: {
            SPARK_HOME: '/opt/spark',
            SPARK_HISTORY_DIR: path.join(tmp, 'logs'),
            SPARK_HISTORY_URL: 'http://127.0.0.1:18080',
          },
          runDir: tmp,
        },
        {
          PATH: '/usr/bin',
          JAVA_HOME: '/opt/java',
          SECRET_KEY: 'ab'.repeat(32),
          AUTH_ADMIN_KEY: 'sok_admin',
          MONGO_URL: 'mongodb://u:p@db/',
          AWS_SECRET_ACCESS_KEY: 'x',
        },
      );
      expect(env).toEqual({
        PATH: '/usr/bin',
        JAVA_HOME: '/opt/java',
        SPARK_HOME: '/opt/spark',
        SPARK_LOCAL_IP: '127.0.0.1',
      });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
