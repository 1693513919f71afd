// Who is calling, and may they: one Authenticator per API process (API keys and OIDC tokens), and the
// two places it is plugged in: a Koa middleware that each route mounts first with the role it declares
// (before its body is read, so no upload is stored for an unknown caller), and a Socket.IO middleware that
// each namespace mounts with its own role.
import type { Middleware } from 'koa';
import type { ExtendedError, Socket } from 'socket.io';
import type { Config } from '../../lib/config';
import type { Store } from '../../lib/mongo';
import { findKey } from './keys';
import { createTokenVerifier, IssuerUnavailable, TokenError } from './oidc';
import { hasRole, Role, type Need } from './roles';

export interface Principal {
  /** `anonymous` (auth off), `key:<keyId>` or `oidc:<sub>`: what the audit trail records. */
  id: string;
  role: Role;
}

/** A refusal: 401 (who are you?), 403 (not allowed) or 503 (the issuer cannot be reached). */
export class AuthFailure extends Error {
  constructor(
    readonly status: 401 | 403 | 503,
    message: string,
  ) {
    super(message);
    this.name = 'AuthFailure';
  }
}

export interface Credentials {
  authorization?: string;
  apiKey?: string;
}

export interface Authenticator {
  /** AUTH_MODE=on. Off: every caller is `anonymous` with the admin role. */
  enabled: boolean;
  /** The caller behind these credentials; throws AuthFailure. */
  identify(creds: Credentials): Promise<Principal>;
}

export const ANONYMOUS: Principal = { id: 'anonymous', role: Role.admin };

const NO_CREDENTIALS =
  'authentication required: send an API key (Authorization: Bearer <key>, or X-API-Key) or an OIDC bearer token';

/** A JWS in compact form: three base64url parts, the header a JSON object (`eyJ`). */
const looksLikeJwt = (s: string) => /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(s);

export function createAuthenticator(
  config: Pick<
    Config,
    'AUTH_MODE' | 'OIDC_ISSUER' | 'OIDC_AUDIENCE' | 'OIDC_JWKS_URL' | 'OIDC_ROLE_CLAIM' | 'OIDC_ROLE_MAP'
  >,
  store: Store,
): Authenticator {
  if (config.AUTH_MODE === 'off') return { enabled: false, identify: async () => ANONYMOUS };
  const tokens = createTokenVerifier(config);
  const claim = config.OIDC_ROLE_CLAIM;
  return {
    enabled: true,
    async identify({ authorization, apiKey }) {
      let secret = apiKey?.trim();
      if (!secret && authorization) {
        const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim());
        if (!m) throw new AuthFailure(401, 'the Authorization header must be "Bearer <API key or token>"');
        secret = m[1];
      }
      if (!secret) throw new AuthFailure(401, NO_CREDENTIALS);
      if (looksLikeJwt(secret)) {
        if (!tokens) throw new AuthFailure(401, 'bearer tokens are not accepted here: OIDC is not configured');
        try {
          const who = await tokens.verify(secret);
          if (!who.role) throw new AuthFailure(403, `the token's '${claim}' claim names no role of this service`);
          return { id: `oidc:${who.subject}`, role: who.role };
        } catch (e) {
          if (e instanceof TokenError) throw new AuthFailure(401, e.message);
          if (e instanceof IssuerUnavailable) throw new AuthFailure(503, e.message);
          throw e;
        }
      }
      const key = await findKey(store, secret);
      if (!key) throw new AuthFailure(401, 'the API key is unknown or has been revoked');
      return { id: `key:${key.keyId}`, role: key.role };
    },
  };
}

/** Throws 403 unless the principal holds the role. */
export function authorize(who: Principal, need: Role, what: string): void {
  if (!hasRole(who.role, need))
    throw new AuthFailure(403, `the ${who.role} role may not ${what}; it needs the ${need} role`);
}

export interface AuthDeps {
  config: Config;
  store: Store;
  /** Made on first use when absent, and kept here, so every app and transport of a process shares it. */
  auth?: Authenticator;
}

export const authenticatorOf = (deps: AuthDeps): Authenticator =>
  (deps.auth ??= createAuthenticator(deps.config, deps.store));

/**
 * Koa middleware of one route: sets ctx.state.principal, or answers 401/403/503 with {message}. Each route
 * mounts it with the role it declares, ahead of its body parsing and handler, so the rule that is checked
 * is always the one of the route that answers.
 */
export function requireRole(deps: AuthDeps, need: Need): Middleware {
  if (need === 'public') return (_ctx, next) => next();
  const auth = authenticatorOf(deps);
  return async (ctx, next) => {
    try {
      const who = await auth.identify({ authorization: ctx.get('Authorization'), apiKey: ctx.get('X-API-Key') });
      ctx.state.principal = who;
      authorize(who, need, `${ctx.method} ${ctx.path}`);
    } catch (e) {
      if (!(e instanceof AuthFailure)) throw e;
      if (e.status === 401) ctx.set('WWW-Authenticate', 'Bearer');
      ctx.status = e.status;
      ctx.body = { message: e.message };
      return;
    }
    await next();
  };
}

export type SocketGuard = (socket: Socket, next: (err?: ExtendedError) => void) => void;

/**
 * Socket.IO middlewares: `socketAuth(deps)(need)` guards one namespace with the role it declares.
 * Credentials in `auth.token` (or `auth.apiKey`) or the headers.
 */
export function socketAuth(deps: AuthDeps): (need: Need) => SocketGuard {
  const auth = authenticatorOf(deps);
  return (need) => (socket, next) => {
    if (need === 'public') return next();
    const given = (socket.handshake.auth ?? {}) as { token?: unknown; apiKey?: unknown };
    const headers = socket.handshake.headers;
    const creds: Credentials = {
      authorization: typeof given.token === 'string' ? `Bearer ${given.token}` : headers.authorization,
      apiKey: typeof given.apiKey === 'string' ? given.apiKey : (headers['x-api-key'] as string | undefined),
    };
    auth
      .identify(creds)
      .then((who) => {
        authorize(who, need, `open ${socket.nsp.name}`);
        socket.data.principal = who;
        next();
      })
      .catch((e: unknown) => {
        const failure = e instanceof AuthFailure ? e : new AuthFailure(503, 'cannot check credentials now');
        next(Object.assign(new Error(failure.message), { data: { status: failure.status, message: failure.message } }));
      });
  };
}
