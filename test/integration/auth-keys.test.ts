// Authentication with API keys (AUTH_MODE=on, the bootstrap admin key from AUTH_ADMIN_KEY), roles on REST
// paths, SSE streams and Socket.IO namespaces, and the audit trail, against the real API and MongoDB.
import { randomBytes } from 'node:crypto';
import { io as ioClient } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../lib/log';
import { Collections } from '../../lib/mongo';
import { call, startHarness, type Harness } from '../harness';

const ADMIN_KEY = `test-admin-${randomBytes(24).toString('hex')}`;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let h: Harness;
let viewer: { keyId: string; key: string };
let operator: { keyId: string; key: string };
// Every log line the API wrote while this file ran, to look for secrets in it.
const printed: string[] = [];
const toConsole = (level: string, line: string) =>
  level === 'error' || level === 'warn' ? console.error(line) : console.log(line);

beforeAll(async () => {
  // Lines still reach the console (shown when a test fails), as test/setup-logs.ts sends them.
  setLogSink((level, line) => {
    printed.push(line);
    toConsole(level, line);
  });
  h = await startHarness({ worker: false, env: { AUTH_MODE: 'on', AUTH_ADMIN_KEY: ADMIN_KEY, LOG_LEVEL: 'debug' } });
  const make = async (name: string, role: string) => {
    const r = await call(h, 'POST', '/auth/keys', { name, role }, bearer(ADMIN_KEY));
    expect(r.status).toBe(200);
    return r.body as { keyId: string; key: string };
  };
  viewer = await make('a viewer', 'viewer');
  operator = await make('an operator', 'operator');
});
afterAll(async () => {
  setLogSink(toConsole);
  await h?.stop();
});

describe('API keys', () => {
  it('answers 401 with a message and WWW-Authenticate without credentials, on REST paths and SSE streams', async () => {
    for (const p of ['/job', '/cluster', '/job/updates', '/auth/whoami']) {
      const res = await fetch(h.url + p);
      expect(res.status, p).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(((await res.json()) as { message: string }).message).toMatch(/authentication required/);
    }
    const post = await call(h, 'POST', '/job/submit', { name: 'x' });
    expect(post.status).toBe(401);
  });

  it('keeps the health check and the OpenAPI document open', async () => {
    expect((await call(h, 'GET', '/health')).status).toBe(200);
    const doc = await call(h, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
    const submit = doc.body.paths['/api/v1/job/submit'].post;
    expect(submit['x-required-role']).toBe('operator');
    expect(submit.responses).toHaveProperty('401');
    expect(submit.responses).toHaveProperty('403');
    expect(doc.body.paths['/api/v1/cluster'].post['x-required-role']).toBe('admin');
    expect(doc.body.paths['/api/v1/job'].get['x-required-role']).toBe('viewer');
    expect(doc.body.paths['/api/v1/health'].get.security).toEqual([]);
  });

  it('refuses unknown keys, other schemes and JWTs when OIDC is not configured', async () => {
    const unknown = await call(h, 'GET', '/job', undefined, bearer('sok_not-a-key-of-this-service'));
    expect(unknown).toMatchObject({ status: 401, body: { message: /unknown or has been revoked/ } });
    const basic = await call(h, 'GET', '/job', undefined, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(basic).toMatchObject({ status: 401, body: { message: /Bearer/ } });
    const jwt = await call(h, 'GET', '/job', undefined, bearer('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'));
    expect(jwt).toMatchObject({ status: 401, body: { message: /OIDC is not configured/ } });
  });

  it('lets a viewer read, in both headers, and refuses it anything that changes state with 403', async () => {
    expect((await call(h, 'GET', '/job', undefined, bearer(viewer.key))).status).toBe(200);
    expect((await call(h, 'GET', '/cluster', undefined, { 'x-api-key': viewer.key })).status).toBe(200);
    const who = await call(h, 'GET', '/auth/whoami', undefined, bearer(viewer.key));
    expect(who.body).toEqual({ principal: `key:${viewer.keyId}`, role: 'viewer', authentication: 'on' });

    const f = new FormData();
    f.append('name', 'pi');
    f.append('language', 'PYTHON');
    f.append('pyFiles', new Blob(['print(1)']), 'pi.py');
    const submit = await call(h, 'POST', '/job/submit', f, bearer(viewer.key));
    expect(submit.status).toBe(403);
    expect(submit.body.message).toMatch(/viewer role may not POST \/api\/v1\/job\/submit; it needs the operator role/);
    for (const [method, p] of [
      ['POST', '/schedule'],
      ['POST', '/group/g1/job/execute'],
      ['POST', '/sql/execute'],
      ['DELETE', '/job/j1'],
    ]) {
      expect((await call(h, method, p, {}, bearer(viewer.key))).status, `${method} ${p}`).toBe(403);
    }
  });

  it('lets an operator submit, execute and use SQL, but not manage clusters, keys or the audit trail', async () => {
    const saved = await call(h, 'POST', '/sql/statement', { name: 'op', statement: 'SELECT 1' }, bearer(operator.key));
    expect(saved.status).toBe(200);
    // Past authorization: the service's own answer.
    expect((await call(h, 'DELETE', '/job/no-such-job', undefined, bearer(operator.key))).status).toBe(404);
    expect((await call(h, 'POST', '/cluster', { name: 'c' }, bearer(operator.key))).status).toBe(403);
    expect((await call(h, 'POST', '/auth/keys', { name: 'k', role: 'admin' }, bearer(operator.key))).status).toBe(403);
    expect((await call(h, 'GET', '/auth/keys', undefined, bearer(operator.key))).status).toBe(403);
    expect((await call(h, 'GET', '/audit', undefined, bearer(operator.key))).status).toBe(403);
  });

  it('lets an admin manage clusters; lists keys without their secrets; stores keys hashed', async () => {
    const created = await call(
      h,
      'POST',
      '/cluster',
      { name: 'auth-c', type: 'local', url: 'local' },
      bearer(ADMIN_KEY),
    );
    expect(created.status).toBe(200);
    const list = await call(h, 'GET', '/auth/keys', undefined, bearer(ADMIN_KEY));
    expect(list.status).toBe(200);
    expect(list.body.content.map((k: { name: string }) => k.name)).toEqual(
      expect.arrayContaining(['a viewer', 'an operator', 'bootstrap admin key (AUTH_ADMIN_KEY)']),
    );
    const stored = await h.store.col(Collections.apiKeys).find().toArray();
    const everything = JSON.stringify([list.body, stored]);
    for (const secret of [ADMIN_KEY, viewer.key, operator.key]) expect(everything).not.toContain(secret);
    expect(stored.every((d) => /^[0-9a-f]{64}$/.test(d.hash as string))).toBe(true);
  });

  it('refuses a revoked key at once with 401', async () => {
    const k = (await call(h, 'POST', '/auth/keys', { name: 'short-lived', role: 'operator' }, bearer(ADMIN_KEY)))
      .body as { keyId: string; key: string };
    expect((await call(h, 'GET', '/job', undefined, bearer(k.key))).status).toBe(200);
    const revoked = await call(h, 'DELETE', `/auth/keys/${k.keyId}`, undefined, bearer(ADMIN_KEY));
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedTime).toEqual(expect.any(Number));
    expect(await call(h, 'GET', '/job', undefined, bearer(k.key))).toMatchObject({
      status: 401,
      body: { message: /revoked/ },
    });
    const live = await call(h, 'GET', '/auth/keys', undefined, bearer(ADMIN_KEY));
    expect(live.body.content.map((x: { keyId: string }) => x.keyId)).not.toContain(k.keyId);
    const all = await call(h, 'GET', '/auth/keys?revoked=true', undefined, bearer(ADMIN_KEY));
    expect(all.body.content.map((x: { keyId: string }) => x.keyId)).toContain(k.keyId);
    expect((await call(h, 'DELETE', '/auth/keys/nope', undefined, bearer(ADMIN_KEY))).status).toBe(404);
  });

  it('opens SSE streams to a viewer', async () => {
    const res = await fetch(h.url + '/job/updates', { headers: bearer(viewer.key) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    await res.body?.cancel();
  });

  it('guards Socket.IO namespaces: refused without credentials or with an unknown key, open to a viewer', async () => {
    const origin = h.url.replace('/api/v1', '');
    const connect = (auth: Record<string, string>) =>
      new Promise<{ ok: boolean; message?: string }>((resolve) => {
        const s = ioClient(origin + '/jobs', { transports: ['websocket'], auth, reconnection: false });
        s.on('connect', () => {
          s.close();
          resolve({ ok: true });
        });
        s.on('connect_error', (e: Error) => {
          s.close();
          resolve({ ok: false, message: e.message });
        });
      });
    expect(await connect({})).toEqual({ ok: false, message: expect.stringMatching(/authentication required/) });
    expect(await connect({ token: 'sok_wrong' })).toEqual({ ok: false, message: expect.stringMatching(/unknown/) });
    expect(await connect({ token: viewer.key })).toEqual({ ok: true });
    expect(await connect({ apiKey: operator.key })).toEqual({ ok: true });
  });

  it('records every state-changing call, refused ones included, for admins only', async () => {
    const audit = await call(h, 'GET', '/audit?size=200', undefined, bearer(ADMIN_KEY));
    expect(audit.status).toBe(200);
    const records = audit.body.content as Record<string, unknown>[];
    expect(records.every((r) => r.method !== 'GET')).toBe(true);
    const times = records.map((r) => r.time as number);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          principal: `key:${viewer.keyId}`,
          role: 'viewer',
          path: '/api/v1/job/submit',
          status: 403,
        }),
        expect.objectContaining({ principal: `key:${operator.keyId}`, path: '/api/v1/sql/statement', status: 200 }),
        expect.objectContaining({ principal: 'key:bootstrap', method: 'POST', path: '/api/v1/cluster', status: 200 }),
        expect.objectContaining({ method: 'DELETE', path: '/api/v1/job/no-such-job', resourceId: 'no-such-job' }),
      ]),
    );
    const cluster = records.find((r) => r.path === '/api/v1/cluster' && r.status === 200)!;
    expect(cluster.resourceId).toEqual(expect.any(String));
    expect((await call(h, 'GET', `/cluster/${cluster.resourceId}`, undefined, bearer(viewer.key))).status).toBe(200);

    const mine = await call(h, 'GET', `/audit?principals=key:${viewer.keyId}`, undefined, bearer(ADMIN_KEY));
    expect(mine.body.content.length).toBeGreaterThanOrEqual(5);
    expect(mine.body.content.every((r: { principal: string }) => r.principal === `key:${viewer.keyId}`)).toBe(true);
    expect((await call(h, 'GET', '/audit', undefined, bearer(viewer.key))).status).toBe(403);
    expect((await call(h, 'GET', '/audit?from=abc', undefined, bearer(ADMIN_KEY))).status).toBe(409);
  });

  it('never printed a key', () => {
    const out = printed.join('');
    // The capture works: the API's own start-up line is in it.
    expect(out).toContain('bootstrap admin key stored (hashed)');
    for (const secret of [ADMIN_KEY, viewer.key, operator.key]) expect(out).not.toContain(secret);
  });
});
