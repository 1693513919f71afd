// The one error middleware of both Koa apps (api/errors.ts): what a route throws becomes its status and
// {message}; a fault of the service a generic 500 that is logged; unmatched paths and methods 404 and 405.
// A real Koa app with a router, on a loopback port, no other server.
import Router from '@koa/router';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { badRequest, conflict, errorMiddleware, notFound, overLimit, unavailable } from '../../api/errors';
import type { Logger } from '../../lib/log';

const logged: { msg: string; fields?: Record<string, unknown> }[] = [];
const log: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (msg, fields) => void logged.push({ msg, fields }),
};

function app(opts: { pathHint?: string; zodStatus?: 400 | 409 }): Koa {
  const a = new Koa();
  a.silent = true;
  a.use(errorMiddleware({ log, ...opts }));
  const r = new Router({ strict: true, sensitive: true });
  const throws = (e: unknown) => () => {
    throw e;
  };
  r.get('/bad', throws(badRequest('the body must be a JSON object')));
  r.get('/missing', throws(notFound("job 'x' does not exist")));
  r.get('/conflict', throws(conflict('name: taken')));
  r.get('/limit', throws(overLimit('scale: at most 16')));
  r.get('/down', throws(unavailable('cluster k: no answer')));
  r.get('/zod', () => void z.object({ n: z.number() }).parse({ n: 'x' }));
  r.get('/fault', throws(new Error('secret detail')));
  r.get('/ok', (ctx) => void (ctx.body = { fine: true }));
  a.use(r.routes());
  a.use(r.allowedMethods({ throw: false }));
  return a;
}

const servers: http.Server[] = [];
async function serve(a: Koa): Promise<string> {
  const s = http.createServer(a.callback());
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}
const get = async (base: string, p: string, method = 'GET') => {
  const res = await fetch(base + p, { method });
  return { status: res.status, body: (await res.json()) as { message: string }, allow: res.headers.get('allow') };
};

let api: string;
let livy: string;
beforeAll(async () => {
  api = await serve(app({ pathHint: 'paths are case-sensitive, with no trailing slash, as in the OpenAPI document' }));
  livy = await serve(app({ zodStatus: 400 }));
});
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

describe('the error middleware', () => {
  it('answers each client error with its status and {message}', async () => {
    const want = { '/bad': 400, '/missing': 404, '/conflict': 409, '/limit': 402, '/down': 503 };
    for (const [p, status] of Object.entries(want)) {
      const r = await get(api, p);
      expect(r.status, p).toBe(status);
      expect(Object.keys(r.body), p).toEqual(['message']);
    }
    expect((await get(api, '/missing')).body.message).toBe("job 'x' does not exist");
  });

  it('answers a zod error 409 on the API and 400 where the app says so (Livy), naming the field', async () => {
    expect(await get(api, '/zod')).toMatchObject({ status: 409, body: { message: expect.stringMatching(/^n: /) } });
    expect(await get(livy, '/zod')).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^n: /) } });
  });

  it('keeps a fault of the service out of the answer and logs it', async () => {
    logged.length = 0;
    const r = await get(api, '/fault');
    expect(r).toMatchObject({ status: 500, body: { message: 'internal error' } });
    expect(JSON.stringify(r.body)).not.toContain('secret detail');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ msg: 'request failed', fields: { method: 'GET', path: '/fault' } });
  });

  it('logs no client error', async () => {
    logged.length = 0;
    await get(api, '/conflict');
    expect(logged).toEqual([]);
  });

  it('answers an unknown path 404 and another method 405 with Allow, each with a message', async () => {
    expect((await get(api, '/OK')).body.message).toBe(
      'no such path: GET /OK (paths are case-sensitive, with no trailing slash, as in the OpenAPI document)',
    );
    expect((await get(livy, '/ok/')).body.message).toBe(
      'no such path: GET /ok/ (paths are case-sensitive, with no trailing slash)',
    );
    const r = await get(api, '/ok', 'DELETE');
    expect(r.status).toBe(405);
    expect(r.allow).toContain('GET');
    expect(r.body.message).toBe(`DELETE is not a method of /ok; it takes ${r.allow}`);
  });
});
