// The Livy-compatible API behind the main API's authentication: keys, and the role each route declares
// (livyRoutes), checked on the route that matched; paths matched as written; state changes in the audit
// trail, and no start on a public address without authentication.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchKey, insertRecord, markRecord, sessionKey } from '../../api/livy/ids';
import { startLivy, type RunningLivy } from '../../api/livy/server';
import { Collections } from '../../lib/mongo';
import { call, startHarness, type Harness } from '../harness';

const ADMIN_KEY = `livy-admin-${randomBytes(24).toString('hex')}`;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let h: Harness;
let livy: RunningLivy;
let viewer: string;
let operator: string;

beforeAll(async () => {
  h = await startHarness({ worker: false, env: { AUTH_MODE: 'on', AUTH_ADMIN_KEY: ADMIN_KEY } });
  const make = async (role: string) => {
    const r = await call(h, 'POST', '/auth/keys', { name: `livy ${role}`, role }, bearer(ADMIN_KEY));
    expect(r.status).toBe(200);
    return (r.body as { key: string }).key;
  };
  viewer = await make('viewer');
  operator = await make('operator');
  livy = await startLivy({ config: h.config, store: h.store, temporal: h.temporal }, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await livy?.close();
  await h?.stop();
});

const livyCall = (method: string, p: string, headers: Record<string, string> = {}, body?: unknown) =>
  fetch(livy.url + p, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

/** A POST with the path sent as written (fetch would resolve dot segments first). */
const rawPost = (p: string, key: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const u = new URL(livy.url);
    const body = JSON.stringify({ kind: 'pyspark' });
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: p,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

describe('the Livy API with authentication on', () => {
  it('answers 401 without credentials, with a message', async () => {
    for (const p of ['/sessions', '/batches']) {
      const res = await livyCall('GET', p);
      expect(res.status, p).toBe(401);
      expect(((await res.json()) as { message: string }).message).toMatch(/authentication required/);
    }
  });

  it('lets a viewer read and refuses its writes with 403', async () => {
    const list = await livyCall('GET', '/sessions', bearer(viewer));
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ from: 0, total: 0, sessions: [] });
    const create = await livyCall('POST', '/sessions', bearer(viewer), { kind: 'pyspark' });
    expect(create.status).toBe(403);
  });

  it('lets an operator write (a malformed batch gets past authentication to a 400) and audits it', async () => {
    const res = await livyCall('POST', '/batches', { 'x-api-key': operator }, { file: 42 });
    expect(res.status).toBe(400);
    const records = await h.store.col(Collections.audit).find({ path: '/batches', method: 'POST' }).toArray();
    expect(records.map((r) => r.status).sort()).toEqual([400]);
    const refused = await h.store.col(Collections.audit).find({ path: '/sessions', status: 403 }).toArray();
    expect(refused).toHaveLength(1);
  });

  it('matches paths as written: a viewer gets no write through another spelling, an operator no route', async () => {
    for (const p of ['/Sessions', '/SESSIONS', '/sessions/', '//sessions', '/%73essions', '/x/../sessions']) {
      for (const key of [viewer, operator]) {
        const r = await rawPost(p, key);
        expect(r.status, p).toBe(404);
        expect(r.body, p).toMatch(/no such path/);
      }
    }
    expect(await h.store.col(Collections.livy).countDocuments()).toBe(0);
  });

  it('answers 404 with {message, msg} for a deleted session or batch and an unknown statement', async () => {
    const base = { name: 'x', proxyUser: null, createdTime: Date.now() };
    await insertRecord(h.store, {
      _id: sessionKey(900),
      type: 'session',
      id: 900,
      groupId: 'g',
      kind: 'pyspark',
      ...base,
    });
    await insertRecord(h.store, { _id: batchKey(900), type: 'batch', id: 900, jobId: 'j', ...base });
    await markRecord(h.store, sessionKey(900), { deleted: true });
    await markRecord(h.store, batchKey(900), { deleted: true });
    const answers = {
      '/sessions/900': "Session '900' not found.",
      '/batches/900': "Batch '900' not found.",
      '/sessions/900/statements/0': "Session '900' not found.",
    };
    for (const [p, message] of Object.entries(answers)) {
      const res = await livyCall('GET', p, bearer(viewer));
      expect(res.status, p).toBe(404);
      expect(await res.json(), p).toEqual({ message, msg: message });
    }
    await insertRecord(h.store, {
      _id: sessionKey(901),
      type: 'session',
      id: 901,
      groupId: 'g',
      kind: 'pyspark',
      ...base,
    });
    const res = await livyCall('GET', '/sessions/901/statements/3', bearer(viewer));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { msg: string }).msg).toBe("Statement '3' not found in session 901.");
  });

  it('refuses to start on a public address without authentication', async () => {
    const off = { ...h.config, AUTH_MODE: 'off' as const };
    await expect(
      startLivy({ config: off, store: h.store, temporal: h.temporal }, { port: 0, host: '0.0.0.0' }),
    ).rejects.toThrow(/0\.0\.0\.0/);
  });
});
