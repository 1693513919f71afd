// The Spark Connect gateway's frame relay (api/connect/relay.ts, h2.ts) between Node's own HTTP/2 client over
// TLS and Node's HTTP/2 server over h2c, both on loopback in this process, with admission decided by the test:
// headers written anew, bodies and large answers byte for byte, refused calls answered between the frames of
// another call's answer, one server per connection, a server lost mid-call, and a client that is not HTTP/2.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcError, GrpcStatus } from '../../api/connect/grpc';
import {
  END_STREAM,
  Frame,
  HeaderDecoder,
  PREFACE,
  encodeHeaderBlock,
  frame,
  headersFrames,
} from '../../api/connect/h2';
import { Relay, type CallRoute, type Endpoint } from '../../api/connect/relay';

const SECRET = 'server-secret';

/** A gRPC frame of a message whose field 1 is `sessionId`, padded with `extra` bytes of field 2. */
function body(sessionId: string, extra = 0): Buffer {
  const id = Buffer.from(sessionId);
  const pad = Buffer.alloc(extra, 0x61);
  const len: number[] = [];
  for (let n = extra; ; n >>>= 7) {
    len.push(n >= 128 ? (n & 0x7f) | 0x80 : n);
    if (n < 128) break;
  }
  const msg = Buffer.concat([Buffer.from([0x0a, id.length]), id, Buffer.from([0x12, ...len]), pad]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(msg.length, 1);
  return Buffer.concat([prefix, msg]);
}

interface Seen {
  headers: http2.IncomingHttpHeaders;
  sha: string;
}

/** An h2c server answering each call with `size` bytes (the request's sha256 repeated) and grpc-status 0. */
async function upstream(opts: { size?: (path: string) => number; dieAfterHeaders?: boolean } = {}) {
  const seen: Seen[] = [];
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const h = createHash('sha256');
    stream.on('data', (c: Buffer) => h.update(c));
    stream.on('end', () => {
      const sha = h.digest('hex');
      seen.push({ headers, sha });
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      if (opts.dieAfterHeaders) {
        setTimeout(() => stream.session?.destroy(), 50);
        return;
      }
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      const size = opts.size?.(String(headers[':path'])) ?? 64;
      const unit = Buffer.from(sha);
      const out = Buffer.alloc(size);
      for (let i = 0; i < size; i += unit.length) unit.copy(out, i);
      stream.end(out);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const endpoint: Endpoint = { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
  return { server, seen, endpoint };
}

/**
 * A TCP hop that hands the server's bytes on in 777-byte pieces, one per turn of the event loop: frames arrive
 * cut anywhere, so a frame of the relay's own put anywhere but between two of them breaks the stream.
 */
async function rechunked(to: Endpoint): Promise<Endpoint> {
  const server = net.createServer((c) => {
    const u = net.connect(to);
    c.pipe(u);
    let queue = Buffer.alloc(0);
    let pumping = false;
    const pump = () => {
      if (!queue.length || c.destroyed) return void (pumping = false);
      c.write(queue.subarray(0, 777));
      queue = queue.subarray(777);
      setImmediate(pump);
    };
    u.on('data', (d: Buffer) => {
      queue = Buffer.concat([queue, d]);
      if (pumping) return;
      pumping = true;
      setImmediate(pump);
    });
    u.on('close', () => c.end());
    c.on('error', () => u.destroy());
    u.on('error', () => c.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => server.close());
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
}

let cert: string;
let key: string;

beforeAll(() => {
  const dir = mkdtempSync(path.join(tmpdir(), 'relay-'));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  writeFileSync(path.join(dir, 'key.pem'), key);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-key',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
});

type Admit = (
  headers: Record<string, string>,
  list: [string, string][],
  sessionId: Promise<string>,
) => Promise<CallRoute>;

const closers: (() => void)[] = [];
afterAll(() => closers.forEach((c) => c()));

async function relay(admit: Admit) {
  const server = tls.createServer({ cert, key, ALPNProtocols: ['h2'] }, (socket) => new Relay(socket, { admit }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  closers.push(() => server.close());
  const client = () => {
    const c = http2.connect(`https://127.0.0.1:${port}`, { ca: cert });
    c.on('error', () => undefined);
    closers.push(() => c.destroy());
    return c;
  };
  return { port, client };
}

/** A route to `endpoint` with the request's headers but the credentials, and the secret added. */
const routeTo = (endpoint: Endpoint, ended: string[] = [], failed?: GrpcError) =>
  (async (headers, list, sessionId) => {
    const id = await sessionId;
    const out: [string, string][] = [
      [':method', 'POST'],
      [':scheme', 'http'],
      [':path', headers[':path']],
      [':authority', `${endpoint.host}:${endpoint.port}`],
    ];
    for (const [k, v] of list) if (!k.startsWith(':') && k !== 'authorization' && k !== 'x-secret') out.push([k, v]);
    out.push(['x-secret', SECRET]);
    return {
      endpoint,
      headers: out,
      ended: () => ended.push(id),
      failed: async () => failed ?? new GrpcError(GrpcStatus.UNAVAILABLE, 'lost'),
    };
  }) satisfies Admit;

interface Answer {
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  data: Buffer;
}

function call(c: http2.ClientHttp2Session, p: string, payload: Buffer | null, extra: Record<string, string> = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const req = c.request(
      { ':method': 'POST', ':path': p, 'content-type': 'application/grpc', ...extra },
      {
        endStream: payload === null,
      },
    );
    const chunks: Buffer[] = [];
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    req.on('response', (h) => (headers = h));
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => resolve({ headers, trailers, data: Buffer.concat(chunks) }));
    req.on('error', reject);
    if (payload) req.end(payload);
  });
}

const status = (a: Answer) => a.trailers['grpc-status'] ?? a.headers['grpc-status'];
const message = (a: Answer) => decodeURIComponent(String(a.trailers['grpc-message'] ?? a.headers['grpc-message']));

describe('Spark Connect relay', () => {
  it('forwards calls with their headers written anew, and bodies and large answers byte for byte', async () => {
    const up = await upstream({ size: (p) => (p.endsWith('Big') ? 8 * 2 ** 20 + 17 : 64) });
    closers.push(() => up.server.close());
    const ended: string[] = [];
    const r = await relay(routeTo(up.endpoint, ended));
    const c = r.client();
    const big = body('s1', 300_000);
    const a = await call(c, '/svc/Big', big, { authorization: 'Bearer token', 'x-meta': 'one' });
    expect(status(a)).toBe('0');
    const sha = createHash('sha256').update(big).digest('hex');
    expect(up.seen[0].sha).toBe(sha);
    const expected = Buffer.alloc(8 * 2 ** 20 + 17);
    for (let at = 0; at < expected.length; at += 64) expected.write(sha, at, 'latin1');
    expect(a.data.length).toBe(expected.length);
    expect(a.data.equals(expected)).toBe(true);
    expect(up.seen[0].headers.authorization).toBeUndefined();
    expect(up.seen[0].headers['x-secret']).toBe(SECRET);
    expect(up.seen[0].headers['x-meta']).toBe('one');
    // Further calls reuse the client's HPACK table (indexed headers): decoded right, one after another and at once.
    for (let i = 0; i < 3; i++)
      expect(
        status(await call(c, '/svc/Small', body('s1'), { authorization: 'Bearer token', 'x-meta': `v${i}` })),
      ).toBe('0');
    const many = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => call(c, '/svc/Small', body(`s${i}`), { 'x-meta': `m${i}` })),
    );
    expect(many.map(status)).toEqual(['0', '0', '0', '0', '0']);
    expect(up.seen.map((s) => s.headers['x-meta']).slice(1, 4)).toEqual(['v0', 'v1', 'v2']);
    expect(ended.length).toBe(9);
  });

  it('answers refused calls itself, also between the frames of another call streaming its answer', async () => {
    const up = await upstream({ size: (p) => (p.endsWith('Big') ? 2 ** 20 : 64) });
    closers.push(() => up.server.close());
    const ok = routeTo(await rechunked(up.endpoint));
    const r = await relay(async (headers, list, sessionId) => {
      if (headers.authorization !== 'Bearer good') throw new GrpcError(GrpcStatus.UNAUTHENTICATED, 'bad token: é%');
      return ok(headers, list, sessionId);
    });
    const c = r.client();
    const bigCall = call(c, '/svc/Big', body('s1'), { authorization: 'Bearer good' });
    await new Promise((res) => setTimeout(res, 20));
    const refusals = await Promise.all(
      [1, 2, 3].map(() => call(c, '/svc/X', body('s1', 200_000), { authorization: 'Bearer bad' })),
    );
    for (const a of refusals) {
      expect(status(a)).toBe(String(GrpcStatus.UNAUTHENTICATED));
      expect(message(a)).toBe('bad token: é%');
    }
    const big = await bigCall;
    expect(status(big)).toBe('0');
    expect(big.data.length).toBe(2 ** 20);
    // The refused bodies' flow-control window was given back: more large requests still pass.
    for (let i = 0; i < 3; i++)
      expect(status(await call(c, '/svc/Small', body('s1', 200_000), { authorization: 'Bearer good' }))).toBe('0');
    expect(up.seen.length).toBe(4);
  });

  it('refuses a call without a session id, and one for another server on the same connection', async () => {
    const a = await upstream();
    const b = await upstream();
    closers.push(
      () => a.server.close(),
      () => b.server.close(),
    );
    const r = await relay(async (headers, list, sessionId) =>
      routeTo((await sessionId) === 'on-b' ? b.endpoint : a.endpoint)(headers, list, Promise.resolve(await sessionId)),
    );
    const c = r.client();
    const none = await call(c, '/svc/X', null);
    expect(status(none)).toBe(String(GrpcStatus.INVALID_ARGUMENT));
    expect(message(none)).toBe('the request has no session_id');
    expect(status(await call(c, '/svc/X', body('on-a')))).toBe('0');
    const other = await call(c, '/svc/X', body('on-b'));
    expect(status(other)).toBe(String(GrpcStatus.FAILED_PRECONDITION));
    expect(message(other)).toMatch(/another Spark Connect server/);
    // A new connection may go there.
    expect(status(await call(r.client(), '/svc/X', body('on-b')))).toBe('0');
    expect([a.seen.length, b.seen.length]).toEqual([1, 1]);
  });

  it('answers an open call with the status `failed` gives when its server connection is lost', async () => {
    const up = await upstream({ dieAfterHeaders: true });
    closers.push(() => up.server.close());
    const ended: string[] = [];
    const r = await relay(
      routeTo(up.endpoint, ended, new GrpcError(GrpcStatus.FAILED_PRECONDITION, 'its server died')),
    );
    const a = await call(r.client(), '/svc/X', body('s1'));
    expect(status(a)).toBe(String(GrpcStatus.FAILED_PRECONDITION));
    expect(message(a)).toBe('its server died');
    expect(ended).toEqual(['s1']);
  });

  it('reads header names in any case as lower case, so a forged secret in capitals is taken out too', async () => {
    const up = await upstream();
    closers.push(() => up.server.close());
    const r = await relay(routeTo(up.endpoint));
    const s = tls.connect({ port: r.port, host: '127.0.0.1', ca: cert, ALPNProtocols: ['h2'] });
    s.on('error', () => undefined);
    closers.push(() => s.destroy());
    await once(s, 'secureConnect');
    s.resume();
    const b = body('s1');
    s.write(
      Buffer.concat([
        PREFACE,
        frame(Frame.SETTINGS, 0, 0),
        headersFrames(
          1,
          [
            [':method', 'POST'],
            [':scheme', 'https'],
            [':path', '/svc/X'],
            ['X-Secret', 'forged'],
            ['AUTHORIZATION', 'Bearer t'],
          ],
          false,
        ),
        frame(Frame.DATA, END_STREAM, 1, b),
      ]),
    );
    for (let i = 0; i < 100 && !up.seen.length; i++) await new Promise((res) => setTimeout(res, 20));
    expect(up.seen.length).toBe(1);
    expect(up.seen[0].headers['x-secret']).toBe(SECRET);
    expect(up.seen[0].headers.authorization).toBeUndefined();
    expect(up.seen[0].sha).toBe(createHash('sha256').update(b).digest('hex'));
  });

  it('lets nothing of a refused stream reach the server: not its body, not headers sent on it again', async () => {
    const up = await upstream();
    closers.push(() => up.server.close());
    const ok = routeTo(up.endpoint);
    const r = await relay(async (headers, list, sessionId) => {
      if (headers.authorization !== 'Bearer good') throw new GrpcError(GrpcStatus.UNAUTHENTICATED, 'no');
      return ok(headers, list, sessionId);
    });
    const s = tls.connect({ port: r.port, host: '127.0.0.1', ca: cert, ALPNProtocols: ['h2'] });
    s.on('error', () => undefined);
    closers.push(() => s.destroy());
    await once(s, 'secureConnect');
    const got: Buffer[] = [];
    s.on('data', (d: Buffer) => got.push(d));
    const req = (id: number, auth: string) =>
      headersFrames(
        id,
        [
          [':method', 'POST'],
          [':scheme', 'https'],
          [':authority', 'localhost'],
          [':path', '/svc/X'],
          ['authorization', auth],
        ],
        false,
      );
    // Stream 1 is admitted (so the server connection exists).
    s.write(
      Buffer.concat([
        PREFACE,
        frame(Frame.SETTINGS, 0, 0),
        req(1, 'Bearer good'),
        frame(Frame.DATA, END_STREAM, 1, body('s1')),
      ]),
    );
    for (let i = 0; i < 100 && !up.seen.length; i++) await new Promise((res) => setTimeout(res, 20));
    // Then 1,001 refused streams (more than any list of refused ids a relay might keep), and the first of them
    // sent again, headers and body.
    const refused = Array.from({ length: 1001 }, (_, i) => 3 + 2 * i);
    s.write(
      Buffer.concat(refused.flatMap((id) => [req(id, 'Bearer bad'), frame(Frame.DATA, END_STREAM, id, body('s1'))])),
    );
    await new Promise((res) => setTimeout(res, 500));
    s.write(Buffer.concat([req(3, 'Bearer bad'), frame(Frame.DATA, END_STREAM, 3, body('s1'))]));
    await new Promise((res) => setTimeout(res, 300));
    expect(up.seen.length).toBe(1);
    // The connection is still up, and it was told its refused body's window back (WINDOW_UPDATE on stream 0).
    expect(s.destroyed).toBe(false);
    const all = Buffer.concat(got);
    const credit = Buffer.from([0, 0, 4, Frame.WINDOW_UPDATE, 0, 0, 0, 0, 0]);
    expect(all.includes(credit)).toBe(true);
  });

  it('drops a client that does not speak HTTP/2', async () => {
    const r = await relay(async () => {
      throw new Error('not reached');
    });
    const s = tls.connect({ port: r.port, host: '127.0.0.1', ca: cert, ALPNProtocols: ['h2'] });
    await once(s, 'secureConnect');
    s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    s.resume();
    await once(s, 'close');
    const plain = net.connect({ port: r.port, host: '127.0.0.1' });
    plain.write('not tls at all\r\n\r\n');
    plain.resume();
    plain.on('error', () => undefined);
    await once(plain, 'close');
  });
});

describe('HPACK literals', () => {
  it('encodes blocks any decoder reads back, long names and values included', () => {
    const list: [string, string][] = [
      [':status', '200'],
      ['grpc-message', 'x'.repeat(300)],
      ['n'.repeat(130), ''],
    ];
    expect(new HeaderDecoder().decode(encodeHeaderBlock(list))).toEqual(list);
  });

  it('refuses a block that points past its table', () => {
    expect(() => new HeaderDecoder().decode(Buffer.from([0xff, 0x7f]))).toThrow(/could not be decoded/);
  });
});
