// No drive-by from web pages and no DNS rebinding, with authentication off (the dev stack's setting): the real
// API and Livy ports refuse a foreign Host on every path and a foreign Origin (or a browser's cross-site
// Sec-Fetch-Site) on state-changing calls, SSE streams and the Socket.IO handshake; callers without Origin
// (curl, SDKs, Livy clients), the API's own origin and configured hosts and origins pass. Also: the console's
// exact CSP, a health check that names no internal error, and one answer for every refused Livy file.
import { randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { startLivy, type RunningLivy } from '../../api/livy/server';
import { loadConfig } from '../../lib/config';
import { setLogSink } from '../../lib/log';
import { Collections, type Store } from '../../lib/mongo';
import { eventually, form, startHarness, type Harness } from '../harness';

const EVIL = 'https://evil.example';
const CONFIGURED_ORIGIN = 'https://console.example.test';
const CONFIGURED_HOST = 'orch.example.test';

let h: Harness;
let livy: RunningLivy;
let base: string; // http://127.0.0.1:<port>, the API's own origin
let files: string;
const logLines: string[] = [];

beforeAll(async () => {
  // Refusals and the health check's detail are logged; kept here (and asserted on), not printed.
  setLogSink((_level, line) => void logLines.push(line));
  h = await startHarness({
    worker: false,
    env: { ALLOWED_HOSTS: `${CONFIGURED_HOST}, other.example.test`, ALLOWED_ORIGINS: CONFIGURED_ORIGIN },
  });
  base = h.url.replace(/\/api\/v1$/, '');
  files = path.join(h.config.STACK_DIR, `livy-files-${randomBytes(4).toString('hex')}`);
  mkdirSync(files, { recursive: true });
  const config = { ...h.config, LIVY_LOCAL_DIRS: files };
  livy = await startLivy({ config, store: h.store, temporal: h.temporal }, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await livy?.close();
  await h?.stop();
  setLogSink(undefined);
});

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/** One HTTP request with exactly the headers given (Host included); an event stream resolves at its first bytes. */
function raw(url: string, method = 'GET', headers: Record<string, string> = {}, body?: Buffer | string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      const done = () => {
        const text = Buffer.concat(chunks).toString();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, body: parsed });
      };
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.once('data', (c: Buffer) => {
          chunks.push(c);
          req.destroy();
          done();
        });
        return;
      }
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', done);
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A WebSocket upgrade request: 101 when accepted, else the status and text of the refusal. */
function upgrade(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode!, text: '' });
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A multipart submit body, as a browser's form would send it. */
async function submitForm(name: string): Promise<{ body: Buffer; type: string }> {
  const f = form({ name, language: 'PYTHON', jobClass: 'pi' }, { pyFiles: [{ name: 'pi.py', content: 'print(1)' }] });
  const r = new Request('http://x/', { method: 'POST', body: f });
  return { body: Buffer.from(await r.arrayBuffer()), type: r.headers.get('content-type')! };
}

async function submit(name: string, headers: Record<string, string>): Promise<Raw> {
  const { body, type } = await submitForm(name);
  return raw(`${base}/api/v1/job/submit`, 'POST', { 'content-type': type, ...headers }, body);
}

const jobsNamed = (name: string) => h.store.col(Collections.jobs).countDocuments({ jobName: name });
const port = () => new URL(base).port;

describe('state-changing calls from web pages', () => {
  it('refuses a cross-site multipart submit (no preflight needed) with 403, and no job is created', async () => {
    const evil = await submit('from-evil-page', { origin: EVIL, 'sec-fetch-site': 'cross-site' });
    expect(evil.status).toBe(403);
    expect(evil.body.message).toMatch(/evil\.example.*ALLOWED_ORIGINS/);
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    // Sec-Fetch-Site alone (a browser that sends no Origin) is enough, and so is a page of the same site.
    const site = await submit('from-evil-page', { 'sec-fetch-site': 'cross-site' });
    expect(site.status).toBe(403);
    expect(site.body.message).toMatch(/Sec-Fetch-Site: cross-site/);
    const sameSite = await submit('from-evil-page', { origin: 'http://127.0.0.1:1', 'sec-fetch-site': 'same-site' });
    expect(sameSite.status).toBe(403);
    const nullOrigin = await submit('from-evil-page', { origin: 'null' });
    expect(nullOrigin.status).toBe(403);

    // The API's own origin (the console) and callers without Origin (curl, SDKs) pass; once their records are
    // there, the refused one would have been too.
    const own = await submit('from-own-page', { origin: base, 'sec-fetch-site': 'same-origin' });
    expect(own.status, own.text).toBe(200);
    const curl = await submit('from-curl', {});
    expect(curl.status, curl.text).toBe(200);
    await eventually(async () => expect(await jobsNamed('from-curl')).toBe(1));
    await eventually(async () => expect(await jobsNamed('from-own-page')).toBe(1));
    expect(await jobsNamed('from-evil-page')).toBe(0);
  });

  it('refuses other methods from a foreign origin (PUT, DELETE) and lets reads through', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const r = await raw(`${base}/api/v1/cluster/nope`, method, { origin: EVIL });
      expect(r.status, method).toBe(403);
    }
    // A read cannot change anything, and without CORS headers the page cannot see the answer.
    const read = await raw(`${base}/api/v1/job`, 'GET', { origin: EVIL, 'sec-fetch-site': 'cross-site' });
    expect(read.status).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('lets a configured origin through, with CORS headers for it only', async () => {
    const ok = await submit('from-configured', { origin: CONFIGURED_ORIGIN, 'sec-fetch-site': 'cross-site' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(CONFIGURED_ORIGIN);
    const preflight = await raw(`${base}/api/v1/job/submit`, 'OPTIONS', {
      origin: CONFIGURED_ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(CONFIGURED_ORIGIN);
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
    const evil = await raw(`${base}/api/v1/job/submit`, 'OPTIONS', {
      origin: EVIL,
      'access-control-request-method': 'POST',
    });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    await eventually(async () => expect(await jobsNamed('from-configured')).toBe(1));
  });
});

describe('Host names (DNS rebinding)', () => {
  const paths = ['/api/v1/job', '/api/v1/health', '/console/', '/metrics', '/api/v1/openapi.json', '/nope'];

  it('refuses a foreign Host on every path with 403 naming ALLOWED_HOSTS', async () => {
    for (const p of paths) {
      const r = await raw(`${base}${p}`, 'GET', { host: `evil.example:${port()}` });
      expect(r.status, p).toBe(403);
      expect(r.body.message, p).toMatch(/evil\.example.*ALLOWED_HOSTS/);
    }
    const post = await submit('from-rebound-name', { host: `evil.example:${port()}` });
    expect(post.status).toBe(403);
    const sse = await raw(`${base}/api/v1/job/updates`, 'GET', { host: 'evil.example', accept: 'text/event-stream' });
    expect(sse.status).toBe(403);
  });

  it('answers loopback names, configured names and the address the connection came to', async () => {
    for (const host of [
      `localhost:${port()}`,
      `127.0.0.1:${port()}`,
      `[::1]:${port()}`,
      'LOCALHOST',
      CONFIGURED_HOST,
      `other.example.test:${port()}`,
    ]) {
      const r = await raw(`${base}/api/v1/job`, 'GET', { host });
      expect(r.status, host).toBe(200);
    }
    // Own origin behind a configured name (a proxy that keeps Host and says it was https).
    const own = await submit('behind-proxy', {
      host: CONFIGURED_HOST,
      'x-forwarded-proto': 'https',
      origin: `https://${CONFIGURED_HOST}`,
      'sec-fetch-site': 'same-origin',
    });
    expect(own.status, own.text).toBe(200);
  });
});

describe('streams', () => {
  it('refuses an SSE stream to another origin, opens it for the own origin and for callers without Origin', async () => {
    const url = `${base}/api/v1/job/updates`;
    const evil = await raw(url, 'GET', { origin: EVIL, accept: 'text/event-stream' });
    expect(evil.status).toBe(403);
    expect(evil.body.message).toMatch(/ALLOWED_ORIGINS/);
    const site = await raw(url, 'GET', { 'sec-fetch-site': 'cross-site' });
    expect(site.status).toBe(403);
    const passing: Record<string, string>[] = [
      {},
      { origin: base, 'sec-fetch-site': 'same-origin' },
      { origin: CONFIGURED_ORIGIN },
    ];
    for (const headers of passing) {
      const ok = await raw(url, 'GET', { accept: 'text/event-stream', ...headers });
      expect(ok.status, JSON.stringify(headers)).toBe(200);
      expect(ok.text).toContain(': connected');
    }
  });

  it('refuses a Socket.IO polling handshake from another origin or Host, with no wildcard CORS', async () => {
    const url = `${base}/socket.io/?EIO=4&transport=polling`;
    const evil = await raw(url, 'GET', { origin: EVIL });
    expect(evil.status).toBe(403);
    expect(evil.body.message).toMatch(/ALLOWED_ORIGINS/);
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    const rebound = await raw(url, 'GET', { host: `evil.example:${port()}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body.message).toMatch(/ALLOWED_HOSTS/);

    const plain = await raw(url, 'GET');
    expect(plain.status).toBe(200);
    expect(plain.text).toMatch(/^0\{"sid"/);
    const own = await raw(url, 'GET', { origin: base });
    expect(own.status).toBe(200);
    expect(own.headers['access-control-allow-origin']).toBeUndefined();
    const configured = await raw(url, 'GET', { origin: CONFIGURED_ORIGIN });
    expect(configured.status).toBe(200);
    expect(configured.headers['access-control-allow-origin']).toBe(CONFIGURED_ORIGIN);
  });

  it('refuses a Socket.IO websocket upgrade from another origin and accepts the own origin', async () => {
    const url = `${base}/socket.io/?EIO=4&transport=websocket`;
    const evil = await upgrade(url, { origin: EVIL });
    expect(evil.status).not.toBe(101);
    expect(evil.status).toBeGreaterThanOrEqual(400);
    expect(evil.text).toMatch(/ALLOWED_ORIGINS/);
    const rebound = await upgrade(url, { host: 'evil.example', origin: 'http://evil.example' });
    expect(rebound.status).toBeGreaterThanOrEqual(400);
    expect((await upgrade(url, { origin: base })).status).toBe(101);
    expect((await upgrade(url, {})).status).toBe(101);
  });
});

describe('the web console', () => {
  it("allows connections to its own origin only (and the OIDC issuer's when configured)", async () => {
    const r = await raw(`${base}/console/`);
    expect(r.status).toBe(200);
    expect(r.headers['content-security-policy']).toBe(
      "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'",
    );
  });
});

describe('the Livy port', () => {
  const livyPort = () => new URL(livy.url).port;

  it('refuses a foreign Host and a foreign Origin, with message and msg', async () => {
    const rebound = await raw(`${livy.url}/version`, 'GET', { host: `evil.example:${livyPort()}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body.message).toMatch(/ALLOWED_HOSTS/);
    expect(rebound.body.msg).toBe(rebound.body.message);
    const evil = await raw(
      `${livy.url}/sessions`,
      'POST',
      { origin: EVIL, 'sec-fetch-site': 'cross-site', 'content-type': 'text/plain' },
      JSON.stringify({ kind: 'pyspark' }),
    );
    expect(evil.status).toBe(403);
    expect(evil.body.msg).toMatch(/ALLOWED_ORIGINS/);
    const list = await raw(`${livy.url}/sessions`);
    expect(list.body).toMatchObject({ total: 0, sessions: [] });
  });

  it('lets Livy clients (no Origin), its own origin and configured names through', async () => {
    expect((await raw(`${livy.url}/version`, 'GET', { host: `${CONFIGURED_HOST}:${livyPort()}` })).status).toBe(200);
    // Past the check to the body's validation: a kind Livy does not know.
    const headers = { 'content-type': 'application/json' };
    const body = JSON.stringify({ kind: 'sparkr' });
    expect((await raw(`${livy.url}/sessions`, 'POST', headers, body)).status).toBe(400);
    const own = await raw(`${livy.url}/sessions`, 'POST', { ...headers, origin: livy.url }, body);
    expect(own.status).toBe(400);
  });

  it('answers every refused local file with the same text, whether it exists or not', async () => {
    const ok = path.join(files, 'ok.py');
    writeFileSync(ok, 'print(1)');
    mkdirSync(path.join(files, 'a-folder.py'), { recursive: true });
    const outside = `${files}-outside`;
    mkdirSync(outside, { recursive: true });
    writeFileSync(path.join(outside, 'there.py'), 'print(2)');
    symlinkSync(path.join(outside, 'there.py'), path.join(files, 'link.py'));
    const post = (file: string) =>
      raw(`${livy.url}/batches`, 'POST', { 'content-type': 'application/json' }, JSON.stringify({ file }));
    const refusals = [
      path.join(files, 'missing.py'), // inside, missing
      path.join(outside, 'there.py'), // outside, exists
      '/no/such/file.py', // outside, missing
      path.join(files, 'a-folder.py'), // inside, not a file
      path.join(files, '..', path.basename(outside), 'there.py'), // climbs out to a file that exists
      path.join(files, 'link.py'), // inside, but a link to a file outside
      `file://${path.join(files, 'missing.py')}`,
    ];
    const texts = new Set<string>();
    for (const f of refusals) {
      const r = await post(f);
      expect(r.status, f).toBe(400);
      texts.add((r.body.message as string).replace(f, '<ref>'));
    }
    expect([...texts]).toEqual(["pyFiles: '<ref>' is not a readable file inside LIVY_LOCAL_DIRS"]);
    const created = await post(ok);
    expect(created.status, created.text).toBe(201);
  });
});

describe('GET /health', () => {
  it('names an unreachable dependency with a fixed word and logs the detail', async () => {
    // A port nothing listens on: the driver's error names the address and ECONNREFUSED.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const deadPort = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const client = new MongoClient(`mongodb://127.0.0.1:${deadPort}/?directConnection=true`, {
      serverSelectionTimeoutMS: 300,
    });
    const db = client.db('down');
    const store: Store = { client, db, col: (n) => db.collection(n), close: () => client.close() };
    const server = http.createServer(createApp({ config: h.config, store, temporal: h.temporal }).callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/health`;
      const r = await raw(url);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({
        status: 'DEGRADED',
        temporal: { up: true },
        mongo: { up: false, error: 'unreachable' },
      });
      expect(r.text).not.toContain(String(deadPort));
      expect(r.text).not.toMatch(/ECONNREFUSED|Mongo|Error/);
      expect(logLines.some((l) => l.includes('mongodb is unreachable') && l.includes(String(deadPort)))).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await client.close();
    }
  });

  it('is UP when both answer', async () => {
    const r = await raw(`${base}/api/v1/health`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'UP', temporal: { up: true }, mongo: { up: true } });
  });
});

describe('settings', () => {
  it('refuses wildcards and malformed entries at start-up, naming the variable', () => {
    const env = { SECRET_KEY: 'a'.repeat(64) };
    expect(() => loadConfig({ ...env, ALLOWED_ORIGINS: '*' })).toThrow(/ALLOWED_ORIGINS: '\*' is not allowed/);
    expect(() => loadConfig({ ...env, ALLOWED_ORIGINS: 'https://a.example/path' })).toThrow(/ALLOWED_ORIGINS/);
    expect(() => loadConfig({ ...env, ALLOWED_HOSTS: '*' })).toThrow(/ALLOWED_HOSTS: no wildcard/);
    expect(() => loadConfig({ ...env, ALLOWED_HOSTS: 'https://a.example' })).toThrow(/ALLOWED_HOSTS/);
    const c = loadConfig({ ...env, ALLOWED_HOSTS: 'a.example, [fd00::1]', ALLOWED_ORIGINS: 'https://a.example:8443/' });
    expect(c.ALLOWED_HOSTS).toBe('a.example, [fd00::1]');
    expect(c.ALLOWED_ORIGINS).toBe('https://a.example:8443/');
  });
});
