// Host and Origin checks of every port (the REST API with its console, metrics and SSE streams, the Socket.IO
// handshake, the Livy-compatible API), with authentication on or off. Two holes of a service on loopback:
// - any web page may send a simple cross-site request (a multipart form POST needs no CORS preflight), so a
//   page the developer opens could submit a job: state-changing calls and streams refuse a foreign Origin
//   or a browser's `Sec-Fetch-Site: cross-site | same-site` without a configured origin;
// - a DNS name the attacker rebinds to 127.0.0.1 makes the browser treat this server as the attacker's own
//   origin, so every request carries that name in Host: any Host but loopback names, the bound address, the
//   address the connection arrived at and ALLOWED_HOSTS is refused.
// Callers that are not browsers (curl, SDKs, Livy clients) send neither Origin nor Sec-Fetch-Site and pass.
import type { Context, Middleware } from 'koa';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Config } from '../../lib/config';
import { logger } from '../../lib/log';

const log = logger('security');

export type HostOriginSettings = Pick<Config, 'ALLOWED_HOSTS' | 'ALLOWED_ORIGINS'>;

export interface HostOriginPolicy {
  /** Host names allowed besides loopback names and the connection's local address (lowercase, no port). */
  hosts: ReadonlySet<string>;
  /** Configured origins (scheme://host[:port], as URL.origin writes them). */
  origins: ReadonlySet<string>;
}

/** Methods that change nothing: only these pass without the Origin check (streams check it themselves). */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
const WILDCARD_BINDS = new Set(['0.0.0.0', '[::]', '']);
const CORS_HEADERS = 'authorization, content-type, x-api-key, last-event-id';
const CORS_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';

const list = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);

/** Lowercase, no trailing dot, IPv6 in brackets: the form hostnameOf gives a Host header's name. */
function normalName(h: string): string {
  const n = h.trim().toLowerCase().replace(/\.$/, '');
  return isIP(n) === 6 ? `[${n}]` : n;
}

/** `bindHost`: the address the port listens on (API_HOST, LIVY_HOST); a specific one is allowed as Host. */
export function hostOriginPolicy(config: HostOriginSettings, bindHost: string): HostOriginPolicy {
  const hosts = new Set(list(config.ALLOWED_HOSTS).map(normalName));
  const bind = normalName(bindHost);
  if (!WILDCARD_BINDS.has(bind)) hosts.add(bind);
  return { hosts, origins: new Set(list(config.ALLOWED_ORIGINS).map((o) => new URL(o).origin)) };
}

/** The name part of a Host header (lowercase, no port, IPv6 in brackets); undefined when it is none. */
function hostnameOf(host: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^[\]:/@?#\s\\]+)(?::\d{1,5})?$/i.exec(host);
  return m ? m[1].toLowerCase().replace(/\.$/, '') : undefined;
}

function isLoopbackName(n: string): boolean {
  if (n === 'localhost' || n === '[::1]') return true;
  return isIP(n) === 4 && n.startsWith('127.');
}

/** The address a connection was accepted on, written as a Host header would name it. */
function localName(addr: string | undefined): string | undefined {
  if (!addr) return undefined;
  const v4 = addr.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  return isIP(v4) === 6 ? `[${v4.toLowerCase()}]` : v4;
}

/** A client's value quoted in a message: short, printable. */
const clip = (s: string) => JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}…` : s);

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Why the request's Host is refused, or undefined. */
export function hostProblem(req: IncomingMessage, policy: HostOriginPolicy): string | undefined {
  const host = header(req, 'host');
  // Only HTTP/1.0 clients omit it; browsers always send one, so no rebound name hides behind its absence.
  if (host === undefined) return undefined;
  const name = hostnameOf(host);
  if (name && (isLoopbackName(name) || policy.hosts.has(name) || name === localName(req.socket?.localAddress)))
    return undefined;
  return (
    `this server does not answer to the host name ${clip(host)} (a DNS name pointing at it is not enough); ` +
    'if it is one of its names, add it to ALLOWED_HOSTS (comma-separated)'
  );
}

function originOf(value: string): string | undefined {
  // Most calls carry no Origin (ctx.get gives ''): answered without the exception new URL('') would throw.
  if (!value) return undefined;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** scheme://Host of the request: the origin of a page this server (or the proxy in front of it) served. */
function ownOrigin(req: IncomingMessage): string | undefined {
  const host = header(req, 'host');
  if (!host) return undefined;
  // A browser cannot set X-Forwarded-Proto on a request sent without a preflight, so a proxy's value is trusted.
  const forwarded = header(req, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  const scheme =
    forwarded === 'http' || forwarded === 'https' ? forwarded : (req.socket as TLSSocket)?.encrypted ? 'https' : 'http';
  return originOf(`${scheme}://${host}`);
}

const isCrossSite = (site: string | undefined) => site === 'cross-site' || site === 'same-site';

/** Why a browser's request from another origin is refused, or undefined (no Origin, the own one, a configured one). */
export function originProblem(req: IncomingMessage, policy: HostOriginPolicy): string | undefined {
  const origin = header(req, 'origin');
  const site = header(req, 'sec-fetch-site')?.toLowerCase();
  if (origin !== undefined) {
    const o = originOf(origin);
    if (o && policy.origins.has(o)) return undefined;
    if (o && o === ownOrigin(req) && !isCrossSite(site)) return undefined;
    return (
      `a web page of ${clip(origin)} may not call this service from the browser; ` +
      'if that origin is yours, add it to ALLOWED_ORIGINS (comma-separated)'
    );
  }
  if (isCrossSite(site))
    return (
      `a web page of another site (Sec-Fetch-Site: ${site}) may not call this service from the browser; ` +
      'only pages of its own origin or of ALLOWED_ORIGINS may'
    );
  return undefined;
}

// One line per distinct refusal a minute: a page retrying in a loop must not flood the log.
const logged = new Map<string, number>();
function logRefusal(what: string, req: IncomingMessage, why: string): void {
  const key = `${what}|${header(req, 'host')}|${header(req, 'origin')}`;
  const now = Date.now();
  if ((logged.get(key) ?? 0) > now - 60_000) return;
  if (logged.size > 1000) logged.clear();
  logged.set(key, now);
  log.warn(`refused ${what}`, { method: req.method, path: req.url?.split('?')[0], reason: why });
}

/** Where the guard leaves a read's Origin verdict for refuseCrossOrigin. */
const CROSS_ORIGIN = 'security.crossOrigin';

/**
 * Koa middleware: Host on every request; Origin on state-changing ones (403 with {message}); CORS headers
 * for configured origins only. A read keeps the Origin verdict for refuseCrossOrigin (streams).
 */
export function hostOriginGuard(config: HostOriginSettings, bindHost: string): Middleware {
  const policy = hostOriginPolicy(config, bindHost);
  return async (ctx, next) => {
    const read = READS.has(ctx.method);
    const why = hostProblem(ctx.req, policy) ?? (read ? undefined : originProblem(ctx.req, policy));
    if (why) {
      logRefusal(read ? 'host' : 'request', ctx.req, why);
      ctx.status = 403;
      ctx.body = { message: why };
      return;
    }
    if (read) ctx.state[CROSS_ORIGIN] = originProblem(ctx.req, policy);
    const origin = originOf(ctx.get('Origin'));
    if (origin && policy.origins.has(origin)) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.vary('Origin');
      ctx.set('Access-Control-Expose-Headers', 'Location');
      if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
        ctx.set('Access-Control-Allow-Methods', CORS_METHODS);
        ctx.set('Access-Control-Allow-Headers', CORS_HEADERS);
        ctx.set('Access-Control-Max-Age', '600');
        ctx.status = 204;
        return;
      }
    }
    await next();
  };
}

/** For GET endpoints that act like a state-changing call (SSE streams): throws 403 for a foreign origin. */
export function refuseCrossOrigin(ctx: Context): void {
  const why = ctx.state[CROSS_ORIGIN] as string | undefined;
  if (!why) return;
  logRefusal('stream', ctx.req, why);
  throw Object.assign(new Error(why), { status: 403, expose: true });
}

/** Socket.IO's allowRequest: the handshake (polling or websocket upgrade) passes both checks or gets 403. */
export function socketAllowRequest(config: HostOriginSettings, bindHost: string) {
  const policy = hostOriginPolicy(config, bindHost);
  return (req: IncomingMessage, callback: (err: string | null | undefined, success: boolean) => void): void => {
    const why = hostProblem(req, policy) ?? originProblem(req, policy);
    if (why) logRefusal('stream handshake', req, why);
    callback(why ?? null, !why);
  };
}

/** Socket.IO's cors option: none at all unless origins are configured, then only those. */
export function socketCors(config: HostOriginSettings): { origin: string[] } | undefined {
  const origins = [...hostOriginPolicy(config, '').origins];
  return origins.length ? { origin: origins } : undefined;
}
