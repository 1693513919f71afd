// One proxied request to a Spark UI (a driver's, or the History Server's) on loopback: a fresh request
// with none of the caller's headers (no Authorization, no cookies, no X-Forwarded-*), only what Spark needs
// to write its links under the API's path (X-Forwarded-Context, Spark's reverse-proxy header), and a
// response with only the headers a page needs, its redirects kept under that path, and a sandbox that keeps
// its scripts away from the API's origin (the console's credentials).
import http from 'node:http';
import type { Context } from 'koa';
import { notFound, unavailable } from '../errors';

export interface ProxyTarget {
  host: string;
  port: number;
  /** Path and query on the target, checked (paths.ts). */
  path: string;
  /** The API path Spark's pages are served under, e.g. /api/v1/job/<jobId>/ui. */
  context: string;
  /** Says what does not answer, for the 503. */
  what: string;
  /**
   * The 404's message when nothing listens there (a driver whose run just ended, or whose UI is not up yet):
   * the caller asked for a page that is not there, no service is out. Without it: 503.
   */
  refused?: string;
  /**
   * The answer is the same for everyone (Spark's static files, served without credentials): its cache
   * headers pass. Every other answer is a signed-in caller's and says `private`, whatever the upstream (a
   * job's own code may listen on its UI port) says, so no shared cache in front of the API keeps it for others.
   */
  shared?: boolean;
  /** The whole response's time limit (default DEADLINE_MS). */
  deadlineMs?: number;
}

/** Response headers passed on; every other one (Set-Cookie, Spark's own framing rules) is dropped. */
const PASSED = ['content-type', 'content-length', 'cache-control', 'last-modified', 'etag', 'expires'];

/**
 * Scripts of the UI run in an opaque origin: a page a job's strings end up in can read nothing of the
 * API's origin (the console keeps its credentials there). Its own REST calls from such pages are then
 * cross-origin, which is why the executors and task tables stay empty in a browser (docs/api.md).
 */
const CSP = "sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox; frame-ancestors 'none'";

/** The longest the upstream may stay silent, before its headers or between two pieces of the body. */
const IDLE_MS = 30_000;
/** The longest one proxied response may take in all: an upstream that trickles a byte at a time is cut off. */
export const DEADLINE_MS = 5 * 60_000;

/** The caller's Accept, when it is a plain header value; otherwise any type. */
const acceptOf = (v: string): string => (/^[\x20-\x7e]{1,512}$/.test(v) ? v : '*/*');

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
    let answered = false;
    const req = http.request(
      {
        host: t.host,
        port: t.port,
        method: ctx.method === 'HEAD' ? 'HEAD' : 'GET',
        path: t.path,
        headers: {
          host: `${t.host}:${t.port}`,
          accept: acceptOf(ctx.get('accept')),
          'accept-encoding': 'identity',
          'x-forwarded-context': t.context,
        },
        timeout: IDLE_MS,
        // One connection per request: none is left open in a pool for an upstream to hold.
        agent: false,
      },
      (res) => {
        try {
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
          if (!t.shared) ctx.set('cache-control', 'private, no-cache');
          ctx.set('content-security-policy', CSP);
          ctx.set('x-content-type-options', 'nosniff');
          ctx.set('referrer-policy', 'no-referrer');
          // Koa streams it and destroys it when the caller goes away (or the upstream breaks off).
          ctx.body = res;
          answered = true;
          resolve();
        } catch (e) {
          res.destroy();
          reject(unavailable(`${t.what} answered what cannot be passed on (${(e as Error).message})`));
        }
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error('took too long')), t.deadlineMs ?? DEADLINE_MS);
    deadline.unref();
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (answered) return;
      reject(
        e.code === 'ECONNREFUSED' && t.refused
          ? notFound(t.refused)
          : unavailable(`${t.what} does not answer (${e.message})`),
      );
    });
    // A caller that goes away before the upstream answers takes the upstream request with it.
    ctx.res.once('close', () => {
      if (!answered) req.destroy(new Error('the caller went away'));
    });
    req.end();
  });
}
