// Authorization no spelling of a path can get around, against the real API and Livy ports (AUTH_MODE=on).
// The matrix is generated from the route tables themselves (allRoutes, livyRoutes, the stream catalog):
// every route × every caller (anonymous, viewer, operator, admin keys) × spellings of its path (case,
// `//`, a trailing `/`, a percent-encoded letter, dot segments). The exact path must answer by the role
// the route declares; a spelling never gets more than the exact path: every other spelling of the route's
// fixed part answers 404 {message} (no route has it), a percent-encoded letter of a path parameter is the
// same route and answers exactly what the exact path does, and nothing changed state. Bodies are minimal
// and invalid on purpose: a handler's own 400/404/409 proves the role check let the call through, and
// nothing is made.
// Also: multipart uploads leave no file behind in STACK_DIR/uploads, whatever the answer.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { io as ioClient } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../../api/app';
import { hasRole, type Need, type Role } from '../../api/auth/roles';
import type { ApiDeps } from '../../api/deps';
import { livyRoutes } from '../../api/livy/app';
import { startLivy, type RunningLivy } from '../../api/livy/server';
import { METRICS_PATH, METRICS_ROLE } from '../../api/metrics';
import { API_PREFIX } from '../../api/routing';
import type { SqlRuntime } from '../../api/sql/execute/runtime';
import { STREAMS } from '../../api/streams/catalog';
import type { Feeds } from '../../api/streams/feed';
import { Collections } from '../../lib/mongo';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const ADMIN_KEY = `authz-admin-${randomBytes(24).toString('hex')}`;
const stackDir = mkdtempSync(path.join(tmpdir(), 'authz-'));
const uploads = path.join(stackDir, 'uploads');

type Caller = 'anonymous' | Role;
const CALLERS: Caller[] = ['anonymous', 'viewer', 'operator', 'admin'];
const keys: Record<Caller, string | undefined> = { anonymous: undefined, viewer: '', operator: '', admin: ADMIN_KEY };

/** May this caller call a route declaring `need`? */
const allowed = (who: Caller, need: Need) => need === 'public' || (who !== 'anonymous' && hasRole(who, need));

let h: Harness;
let livy: RunningLivy;
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

interface Answer {
  status: number;
  text: string;
}

/**
 * One request with the path sent byte for byte (fetch would resolve dot segments first). An event stream
 * answers its status and is closed.
 */
function send(base: string, method: string, rawPath: string, who: Caller, body?: string): Promise<Answer> {
  const url = new URL(base);
  const headers: Record<string, string> = {};
  if (keys[who]) headers.authorization = `Bearer ${keys[who]}`;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method: method.toUpperCase(), path: rawPath, headers, agent },
      (res) => {
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, text: '' });
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Target {
  /** `api` or `livy`: which port. */
  port: 'api' | 'livy';
  method: string;
  /** The route's template, for messages. */
  template: string;
  /** The concrete path, prefix included. */
  path: string;
  /** The part of `path` before the route's own path (`/api/v1`, or '' on the Livy port). */
  prefix: string;
  need: Need;
  body?: string;
}

// Ids nothing has; a scale that parses. Invalid bodies: a JSON array is no object, so no handler acts on it.
const fill = (template: string) =>
  template.replace(/:([A-Za-z]+)/g, (_m, name: string) => (name === 'scale' ? '1' : 'zz-none'));
const INVALID = '[]';

/** Other spellings of a path: each either names no route (404) or is the same route with the same role. */
function spellings(prefix: string, p: string): string[] {
  const rest = p.slice(prefix.length);
  const segs = rest.split('/').filter(Boolean);
  const first = segs[0] ?? '';
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  const enc = (s: string) => `%${s.charCodeAt(0).toString(16)}${s.slice(1)}`;
  const out = [
    p.toUpperCase(),
    `${prefix}/${[cap(first), ...segs.slice(1)].join('/')}`,
    `/${p}`,
    p.replace(/\/([^/]*)$/, '//$1'),
    `${p}/`,
    `${prefix}/${[enc(first), ...segs.slice(1)].join('/')}`,
    `${prefix}/./${rest.slice(1)}`,
    `${prefix}/zz/../${rest.slice(1)}`,
    `${prefix}/zz/%2e%2e/${rest.slice(1)}`,
    `${p}/../${segs.at(-1) ?? ''}`,
  ];
  if (prefix) out.push(p.replace(prefix, prefix.toUpperCase()), p.replace(prefix, `/%61${prefix.slice(2)}`));
  return [...new Set(out)].filter((s) => s !== p);
}

function targets(deps: ApiDeps): Target[] {
  const api: Target[] = allRoutes(deps).map((r) => ({
    port: 'api',
    method: r.method,
    template: r.path,
    path: API_PREFIX + fill(r.path),
    prefix: API_PREFIX,
    need: r.role,
    body: r.body ? INVALID : undefined,
  }));
  api.push(
    {
      port: 'api',
      method: 'get',
      template: '/openapi.json',
      path: `${API_PREFIX}/openapi.json`,
      prefix: API_PREFIX,
      need: 'public',
    },
    { port: 'api', method: 'get', template: METRICS_PATH, path: METRICS_PATH, prefix: '', need: METRICS_ROLE },
  );
  const lv: Target[] = livyRoutes(deps).map((r) => ({
    port: 'livy',
    method: r.method,
    template: r.path,
    path: fill(r.path),
    prefix: '',
    need: r.role,
    body: r.body ? INVALID : undefined,
  }));
  return [...api, ...lv];
}

/** Every document of every collection but the audit trail (which records refusals by design). */
async function snapshot(): Promise<string> {
  const all: Record<string, unknown> = {};
  for (const name of Object.values(Collections)) {
    if (name === Collections.audit) continue;
    all[name] = await h.store.col(name).find({}).sort({ _id: 1 }).toArray();
  }
  return JSON.stringify(all);
}

/** Everything in the uploads folder, files and the per-request folders alike. */
const uploadEntries = (): string[] => readdirSync(uploads, { recursive: true }) as string[];

async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) await fn(items[i++]);
    }),
  );
}

beforeAll(async () => {
  h = await startHarness({
    worker: false,
    env: {
      AUTH_MODE: 'on',
      AUTH_ADMIN_KEY: ADMIN_KEY,
      STACK_DIR: stackDir,
      SECRET_KEY: randomBytes(32).toString('hex'),
      LAUNCH_AT_SUBMIT: 'off',
    },
  });
  for (const role of ['viewer', 'operator'] as const) {
    const r = await call(
      h,
      'POST',
      '/auth/keys',
      { name: `authz ${role}`, role },
      { authorization: `Bearer ${ADMIN_KEY}` },
    );
    expect(r.status).toBe(200);
    keys[role] = (r.body as { key: string }).key;
  }
  livy = await startLivy({ config: h.config, store: h.store, temporal: h.temporal }, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  agent.destroy();
  await livy?.close();
  await h?.stop();
  rmSync(stackDir, { recursive: true, force: true });
});

describe('authorization by the route that matched', () => {
  const deps = () =>
    ({
      config: h.config,
      store: h.store,
      temporal: h.temporal,
      feeds: {} as Feeds,
      sql: {} as SqlRuntime,
    }) as ApiDeps;
  const base = (t: Target) => (t.port === 'api' ? h.url : livy.url);

  it('answers the live report: an operator cannot reach POST /auth/keys, nor a viewer GET /audit, by any spelling', async () => {
    const before = await h.store.col(Collections.apiKeys).countDocuments();
    const body = JSON.stringify({ name: 'escalation', role: 'admin' });
    for (const p of ['/api/v1/Auth/keys', '/API/V1/auth/keys', '/api/v1/AUTH/KEYS', '/api/v1/%61uth/keys']) {
      const r = await send(h.url, 'POST', p, 'operator', body);
      expect(r.status, p).toBe(404);
      expect(JSON.parse(r.text).message, p).toMatch(/no such path/);
    }
    for (const p of ['//api/v1/auth/keys', '/api/v1/auth/keys/', '/api/v1/jobs/../auth/keys'])
      expect((await send(h.url, 'POST', p, 'operator', body)).status, p).toBe(404);
    expect((await send(h.url, 'POST', '/api/v1/auth/keys', 'operator', body)).status).toBe(403);
    expect(await h.store.col(Collections.apiKeys).countDocuments()).toBe(before);
    for (const p of ['/api/v1/Audit', '/api/v1/AUDIT', '/api/v1/audit/', '/api/v1/%61udit'])
      expect((await send(h.url, 'GET', p, 'viewer')).status, p).toBe(404);
    expect((await send(h.url, 'GET', '/api/v1/audit', 'viewer')).status).toBe(403);
  });

  it('gives every route, on both ports, exactly its declared role, and no spelling more than the exact path', async () => {
    const all = targets(deps());
    expect(all.length).toBeGreaterThan(80);
    const before = await snapshot();
    const problems: string[] = [];
    let requests = 0;
    const cases = all.flatMap((t) => CALLERS.map((who) => ({ t, who })));
    await pool(cases, 8, async ({ t, who }) => {
      const what = `${who} ${t.method.toUpperCase()} ${t.port === 'livy' ? 'livy:' : ''}${t.template}`;
      const exact = await send(base(t), t.method, t.path, who, t.body);
      requests++;
      const may = allowed(who, t.need);
      if (may && (exact.status === 401 || exact.status === 403 || exact.status >= 500))
        problems.push(
          `${what}: exact path ${exact.status} ${exact.text.slice(0, 120)} though the route needs ${t.need}`,
        );
      if (!may && exact.status !== (who === 'anonymous' ? 401 : 403))
        problems.push(`${what}: exact path ${exact.status} though the route needs ${t.need}`);
      // `zz-none` as `%7Az-none`, `1` as `%31`: the parameter decodes to the same value, so the same route answers.
      if (t.path.includes('zz-none') || /rescale\/1$/.test(t.path)) {
        const same = t.path.replaceAll('zz-none', '%7Az-none').replace(/rescale\/1$/, 'rescale/%31');
        const r = await send(base(t), t.method, same, who, t.body);
        requests++;
        if (r.status !== exact.status)
          problems.push(`${what}: ${same} answered ${r.status}, the exact path ${exact.status}`);
      }
      for (const p of spellings(t.prefix, t.path)) {
        const r = await send(base(t), t.method, p, who, t.body);
        requests++;
        // The Spark UIs' pages lie below their bare paths (api/spark-ui/routes.ts): a spelling below one is one
        // of its pages, with its role, so it answers as the exact path does (401, 403, or 404 for a missing job).
        if (/\/(ui|history)$/.test(t.template) && p.startsWith(`${t.path}/`) && r.status === exact.status) continue;
        // Stricter than "never more than the exact path": none of these spellings is a route at all.
        if (r.status !== 404 || !/"message"/.test(r.text))
          problems.push(`${what}: ${p} answered ${r.status} ${r.text.slice(0, 80)} (exact path: ${exact.status})`);
      }
    });
    expect(problems).toEqual([]);
    expect(requests).toBeGreaterThan(all.length * CALLERS.length * 9);
    // Nothing was created, changed or removed by any of them.
    expect(await snapshot()).toBe(before);
  });

  it('guards each Socket.IO namespace with the role of its stream', async () => {
    const origin = h.url.replace(API_PREFIX, '');
    const connect = (namespace: string, who: Caller) =>
      new Promise<boolean>((resolve) => {
        const auth = keys[who] ? { token: keys[who] } : {};
        const s = ioClient(origin + namespace, { transports: ['websocket'], auth, reconnection: false });
        s.on('connect', () => {
          s.close();
          resolve(true);
        });
        s.on('connect_error', () => {
          s.close();
          resolve(false);
        });
      });
    for (const s of STREAMS)
      for (const who of CALLERS)
        expect(await connect(s.namespace, who), `${who} ${s.namespace}`).toBe(allowed(who, s.role));
    // Namespaces are matched exactly too.
    expect(await connect(STREAMS[0].namespace.toUpperCase(), 'admin')).toBe(false);
  });
});

describe('uploads', () => {
  const submit = (fields: Record<string, string>, files: Record<string, { name: string; content: string }[]>) =>
    form({ name: 'authz-upload', language: 'PYTHON', jobClass: 'main', ...fields }, files);
  const py = { pyFiles: [{ name: 'main.py', content: 'print(1)\n'.repeat(1000) }] };
  const as = (who: Caller): Record<string, string> => (keys[who] ? { authorization: `Bearer ${keys[who]}` } : {});

  it('leaves nothing in the uploads folder, whatever the answer', async () => {
    expect(uploadEntries()).toEqual([]);
    const cases: [Caller, string, string, FormData, number][] = [
      ['anonymous', 'POST', '/job/submit', submit({}, py), 401],
      ['viewer', 'POST', '/job/submit', submit({}, py), 403],
      ['operator', 'POST', '/Job/submit', submit({}, py), 404],
      ['operator', 'POST', '/job/submit/', submit({}, py), 404],
      // The schema refuses the form after the files were written: they go all the same.
      ['operator', 'POST', '/job/submit', submit({ language: 'COBOL' }, py), 409],
      ['operator', 'POST', '/job/submit', submit({}, { pyFiles: [{ name: 'notes.txt', content: 'x' }] }), 409],
      ['operator', 'POST', '/job/submit', submit({}, { secrets: [{ name: 'a.py', content: 'x' }] }), 400],
      ['operator', 'PUT', '/group/zz-none', form({}, py), 404],
      ['operator', 'PUT', '/schedule/zz-none', form({}, py), 404],
      ['admin', 'POST', '/auth/keys', submit({}, py), 400],
    ];
    for (const [who, method, p, body, status] of cases) {
      const r = await call(h, method, p, body, as(who));
      expect(r.status, `${who} ${method} ${p}`).toBe(status);
      expect(r.body.message, `${who} ${method} ${p}`).toEqual(expect.any(String));
      expect(uploadEntries(), `${who} ${method} ${p}`).toEqual([]);
    }
  });

  it('moves an accepted upload into the artifacts and leaves the uploads folder empty', async () => {
    const r = await call(h, 'POST', '/job/submit', submit({}, py), as('operator'));
    expect(r.status).toBe(200);
    const jobId = (r.body as { jobId: string }).jobId;
    expect(readdirSync(path.join(h.config.ARTIFACT_DIR, jobId, 'pyFiles'))).toEqual(['main.py']);
    expect(uploadEntries()).toEqual([]);
  });

  it('removes the files of an upload the client abandons half-way', async () => {
    const url = new URL(h.url);
    const boundary = 'authzboundary';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nhalf\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="pyFiles"; filename="big.py"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n';
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: `${API_PREFIX}/job/submit`,
      headers: {
        authorization: `Bearer ${keys.operator}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(10 * 1024 * 1024),
      },
    });
    req.on('error', () => undefined);
    req.write(head);
    req.write(Buffer.alloc(256 * 1024, 'a'));
    // The file is being written…
    await eventually(async () => uploadEntries().length > 0, 10_000, 50);
    req.destroy();
    // …and goes with the request.
    await eventually(async () => uploadEntries().length === 0, 10_000, 50);
  });
});
