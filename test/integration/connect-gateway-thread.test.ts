// The Spark Connect gateway as the API runs it: on a thread of its own with its own MongoDB and Temporal clients
// (api/connect/gateway-thread.ts). No Spark: the calls are answered before any server is needed, by the checks
// the thread makes against the store (API keys and roles, Host), which shows its clients work; then it closes.
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnectGatewayThread, type GatewayThread } from '../../api/connect/gateway-thread';
import { call, startHarness, type Harness } from '../harness';

const ADMIN_KEY = 'gateway-thread-admin-key-0123456789abcdef';
let h: Harness;
let gw: GatewayThread;
const keys: Record<string, string> = {};

/** One gRPC call to the gateway; resolves its grpc-status and grpc-message (trailers-only or trailers). */
async function grpc(
  headers: http2.OutgoingHttpHeaders,
  body = Buffer.alloc(0),
  path = '/spark.connect.SparkConnectService/Config',
): Promise<{ status: string; message: string }> {
  const session = http2.connect(`https://127.0.0.1:${gw.port}`, { ca: readFileSync(h.config.CONNECT_TLS_CERT) });
  try {
    return await new Promise((resolve, reject) => {
      const req = session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        ...headers,
      });
      let status = '';
      let message = '';
      const take = (h: http2.IncomingHttpHeaders) => {
        if (h['grpc-status'] !== undefined) status = String(h['grpc-status']);
        if (h['grpc-message'] !== undefined) message = decodeURIComponent(String(h['grpc-message']));
      };
      req.on('response', take);
      req.on('trailers', take);
      req.on('data', () => undefined);
      req.on('close', () => resolve({ status, message }));
      req.on('error', reject);
      req.end(body);
    });
  } finally {
    session.close();
  }
}

beforeAll(async () => {
  h = await startHarness({ worker: false, env: { AUTH_MODE: 'on', AUTH_ADMIN_KEY: ADMIN_KEY } });
  for (const [name, role] of [
    ['op', 'operator'],
    ['viewer', 'viewer'],
  ]) {
    const r = await call(h, 'POST', '/auth/keys', { name, role }, { authorization: `Bearer ${ADMIN_KEY}` });
    expect(r.status).toBe(200);
    keys[name] = r.body.key;
  }
  gw = await startConnectGatewayThread(h.config, { port: 0, host: '127.0.0.1' });
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await h?.stop();
});

describe('the Spark Connect gateway on its own thread', () => {
  it('checks tokens and roles against the store through its own clients', async () => {
    expect(gw.url).toBe(`sc://127.0.0.1:${gw.port}`);
    expect((await grpc({})).status).toBe('16'); // UNAUTHENTICATED
    expect((await grpc({ authorization: 'Bearer not-a-key-of-this-service' })).status).toBe('16');
    const viewer = await grpc({ authorization: `Bearer ${keys.viewer}` });
    expect(viewer.status).toBe('7'); // PERMISSION_DENIED: below operator
    // The JVM client's header, an operator: past the checks, refused only for the request's missing session_id.
    const op = await grpc({ authentication: `Bearer ${keys.op}` });
    expect(op).toEqual({ status: '3', message: 'the request has no session_id' });
  });

  it('checks Host as every port does, and serves Spark Connect only', async () => {
    const evil = await grpc({ ':authority': 'evil.example:443', authorization: `Bearer ${keys.op}` });
    expect(evil.status).toBe('7');
    const other = await grpc({ authorization: `Bearer ${keys.op}` }, Buffer.alloc(0), '/grpc.health.v1.Health/Check');
    expect(other.status).toBe('12'); // UNIMPLEMENTED
  });

  it('closes: the thread ends and its port no longer answers', async () => {
    await gw.close();
    const refused = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port: gw.port });
      s.once('connect', () => (s.destroy(), resolve(false)));
      s.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
