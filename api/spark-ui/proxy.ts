// One proxied request to a Spark UI (a driver's, or the History Server's) on loopback: a fresh request
// with none of the caller's headers (no Authorization, no cookies, no X-Forwarded-*), only what Spark needs
// to write its links under the API's path (X-Forwarded-Context, Spark's reverse-proxy header), and a
// response with only the headers a page needs, its redirects kept under that path, and a sandbox that keeps
// its scripts away from the API's origin (the console's credentials).
import http from 'node:http';
import type { Context } from 'koa';
import { unavailable } from '../errors';

export interface ProxyTarget {
  host: string;
  port: number;
  /** Path and query on the target, checked (paths.ts). */
  path: string;
  /** The API path Spark's pages are served under, e.g. /api/v1/job/<jobId>/ui. */
  context: string;
  /** Says what does not answer, for the 503. */
  what: string;
}

/** Response headers passed on; every other one (Set-Cookie, Spark's own framing rules) is dropped. */
const PASSED = ['content-type', 'content-length', 'cache-control', 'last-modified', 'etag', 'expires'];

/**
 * Scripts of the UI run in an opaque origin: a page a job's strings end up in can read nothing of the
 * API's origin (the console keeps its credentials there). Its own REST calls from such pages are then
 * cross-origin, which is why the executors and task tables stay empty in a browser (docs/api.md).
 */
const CSP = "sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox; frame-ancestors 'none'";

const TIMEOUT_MS = 30_000;

/** A Location of the target's own origin (or a bare path) as a path under `context`; other origins: none. */
export function rewriteLocation(
  location: string,
  t: Pick<ProxyTarget, 'host' | 'port' | 'context'>,
): string | undefined {
  let u: URL;
  try {
    u = new URL(location, `http://${t.host}:${t.port}/`);
  } catch {
    return undefined;
  }
  if (u.origin !== `http://${t.host}:${t.port}`) return undefined;
  const p = u.pathname + u.search;
  return p === t.context || p.startsWith(`${t.context}/`) ? p : `${t.context}${p}`;
}

export function proxy(ctx: Context, t: ProxyTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: t.host,
        port: t.port,
        method: ctx.method === 'HEAD' ? 'HEAD' : 'GET',
        path: t.path,
        headers: {
          host: `${t.host}:${t.port}`,
          accept: ctx.get('accept') || '*/*',
          'accept-encoding': 'identity',
          'x-forwarded-context': t.context,
        },
        timeout: TIMEOUT_MS,
      },
      (res) => {
        ctx.status = res.statusCode ?? 502;
        for (const h of PASSED) {
          const v = res.headers[h];
          if (typeof v === 'string') ctx.set(h, v);
        }
        const location = res.headers.location;
        if (location) {
          const rewritten = rewriteLocation(location, t);
          if (rewritten) ctx.set('location', rewritten);
        }
        ctx.set('content-security-policy', CSP);
        ctx.set('x-content-type-options', 'nosniff');
        ctx.set('referrer-policy', 'no-referrer');
        ctx.body = res;
        resolve();
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => reject(unavailable(`${t.what} does not answer (${e.message})`)));
    req.end();
  });
}
