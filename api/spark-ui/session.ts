// A browser's way into the proxied Spark UIs with AUTH_MODE=on: a link a browser follows carries no
// Authorization header, so the console first asks POST /spark-ui/session (any signed-in caller, viewer and
// up), which sets a short-lived cookie holding who the caller is and their role, signed with a key derived
// from SECRET_KEY. Only the Spark UI page routes accept it (never any other route, which keep to headers);
// it is HttpOnly (no script reads it), SameSite=Lax (other sites' pages cannot use it but to navigate),
// Secure behind https (also a TLS-terminating proxy's X-Forwarded-Proto), scoped to the API's path, and never
// forwarded to Spark (proxy.ts sends none of the caller's headers). An API key's cookie holds only while the
// key does: each use reads the key's record, so a revoked key or a changed role reaches the UIs at once
// (an OIDC token's cookie has no record to read: it holds until it expires).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import {
  AuthFailure,
  authenticatorOf,
  authorize,
  requireRole,
  type AuthDeps,
  type Principal,
} from '../auth/authenticate';
import { isRole, type Need } from '../auth/roles';
import type { ApiKeyDoc } from '../auth/keys';
import { Collections } from '../../lib/mongo';
import { API_PREFIX } from '../routing';

export const SESSION_COOKIE = 'spark_ui_session';
/** How long a session cookie is good for: a revoked key or a role taken away reaches the UIs this late. */
export const SESSION_TTL_MS = 15 * 60_000;

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64url');
const keyOf = (secretKey: string) =>
  createHmac('sha256', Buffer.from(secretKey, 'hex')).update('spark-ui-session v1').digest();

/** The cookie's value for this principal: `<payload>.<mac>`, both base64url. */
export function issueSession(secretKey: string, who: Principal, now = Date.now()): string {
  const payload = b64(JSON.stringify({ p: who.id, r: who.role, e: now + SESSION_TTL_MS }));
  return `${payload}.${b64(createHmac('sha256', keyOf(secretKey)).update(payload).digest())}`;
}

/** The principal of a cookie value this service signed and that has not expired; undefined otherwise. */
export function verifySession(secretKey: string, value: string | undefined, now = Date.now()): Principal | undefined {
  const [payload, mac, ...more] = (value ?? '').split('.');
  if (!payload || !mac || more.length) return undefined;
  const want = createHmac('sha256', keyOf(secretKey)).update(payload).digest();
  const got = Buffer.from(mac, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
  try {
    const c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      p?: unknown;
      r?: unknown;
      e?: unknown;
    };
    if (typeof c.p !== 'string' || !isRole(c.r) || typeof c.e !== 'number' || c.e <= now) return undefined;
    return { id: c.p, role: c.r };
  } catch {
    return undefined;
  }
}

/** POST /spark-ui/session: sets the cookie for the caller the route's guard identified. */
export function startSession(deps: AuthDeps, ctx: Context): void {
  if (!authenticatorOf(deps).enabled) return;
  const who = ctx.state.principal as Principal;
  // Koa sees https only on its own TLS (app.proxy is off); a browser cannot send X-Forwarded-Proto itself.
  const secure = ctx.secure || ctx.get('X-Forwarded-Proto').split(',')[0].trim().toLowerCase() === 'https';
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, issueSession(deps.config.SECRET_KEY, who), {
    httpOnly: true,
    sameSite: 'lax',
    path: `${API_PREFIX}/`,
    maxAge: SESSION_TTL_MS,
    secure,
    overwrite: true,
  });
}

/**
 * The principal a valid cookie stands for now: an API key's from its record (revoked or gone: none; its role
 * as it is now), an OIDC token's as the cookie says.
 */
export async function sessionPrincipal(
  deps: Pick<AuthDeps, 'store'>,
  who: Principal | undefined,
): Promise<Principal | undefined> {
  if (!who?.id.startsWith('key:')) return who;
  const key = await deps.store
    .col<ApiKeyDoc>(Collections.apiKeys)
    .findOne({ _id: who.id.slice('key:'.length) }, { projection: { role: 1, revokedTime: 1 } });
  return key && key.revokedTime === undefined && isRole(key.role) ? { id: who.id, role: key.role } : undefined;
}

/**
 * The guard of the Spark UI page routes: credentials in headers as on every route; without any, the session
 * cookie, checked against the role the route declares. Neither: 401 as on every route.
 */
export function uiGuard(deps: AuthDeps, need: Need): Middleware {
  const byHeaders = requireRole(deps, need);
  return async (ctx, next) => {
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    if (need === 'public' || ctx.get('Authorization') || ctx.get('X-API-Key') || !cookie) return byHeaders(ctx, next);
    if (!authenticatorOf(deps).enabled) return byHeaders(ctx, next);
    const who = await sessionPrincipal(deps, verifySession(deps.config.SECRET_KEY, cookie));
    try {
      if (!who) throw new AuthFailure(401, 'the Spark UI session has expired or is not valid: open the link again');
      authorize(who, need, `${ctx.method} ${ctx.path}`);
    } catch (e) {
      if (!(e instanceof AuthFailure)) throw e;
      ctx.status = e.status;
      ctx.body = { message: e.message };
      return;
    }
    ctx.state.principal = who;
    await next();
  };
}
