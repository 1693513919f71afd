// A tiny OpenID Connect identity provider for tests of the console's sign-in: discovery, an authorization
// endpoint that signs the user in at once and redirects back with a code, a token endpoint that checks the
// code, the client, the redirect URI and the PKCE verifier (S256) and answers with an RS256 JWT, and the JWKS
// the API verifies that JWT with (OIDC_ISSUER = `issuer`, OIDC_JWKS_URL = `jwksUrl`). Plain HTTP on loopback.
// It also hands out refresh tokens and answers the refresh_token grant (rotating them), and the tests may make
// access tokens short-lived or refuse refreshes.
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestIdentity {
  sub: string;
  /** Put in the `roles` claim. */
  roles: string[];
}

export interface TestIdentityProvider {
  issuer: string;
  jwksUrl: string;
  clientId: string;
  audience: string;
  /** Who the next sign-in is (change it between tests). */
  user: TestIdentity;
  /** Every token request, answered or refused, with the reason of a refusal. */
  tokenRequests: { ok: boolean; why?: string }[];
  /** Every authorization request's query. */
  authorizeRequests: URLSearchParams[];
  /** Every refresh_token grant, answered or refused. */
  refreshRequests: { ok: boolean; why?: string }[];
  /** Lifetime of the access tokens issued from now on, in seconds (600). */
  tokenLifetimeS: number;
  /**
   * Seconds the tokens' iat and exp are moved into the past (0): a verifier with that much clock tolerance then
   * accepts a token for `tokenLifetimeS` seconds only.
   */
  backdateS: number;
  /** Refuse refresh_token grants (as an issuer does once the user's session has ended). */
  refuseRefresh: boolean;
  close(): Promise<void>;
}

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  user: TestIdentity;
}

const KID = 'test-idp-key';
const b64url = (buf: Buffer) => buf.toString('base64url');

export async function startTestIdentityProvider(
  opts: { clientId?: string; audience?: string; user?: TestIdentity } = {},
): Promise<TestIdentityProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: KID, alg: 'RS256', use: 'sig' };
  const grants = new Map<string, Grant>();
  const refreshTokens = new Map<string, TestIdentity>();
  const server = http.createServer((req, res) => void handle(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const idp: TestIdentityProvider = {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    clientId: opts.clientId ?? 'spark-console',
    audience: opts.audience ?? 'spark-orchestrator',
    user: opts.user ?? { sub: 'alice', roles: ['operator'] },
    tokenRequests: [],
    authorizeRequests: [],
    refreshRequests: [],
    tokenLifetimeS: 600,
    backdateS: 0,
    refuseRefresh: false,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'access-control-allow-origin': '*',
      'cache-control': 'no-store',
    });
    res.end(JSON.stringify(body));
  };

  const sign = (user: TestIdentity, key: CryptoKey) => {
    const iat = Math.floor(Date.now() / 1000) - idp.backdateS;
    return new SignJWT({ roles: user.roles, azp: idp.clientId })
      .setProtectedHeader({ alg: 'RS256', kid: KID })
      .setIssuer(issuer)
      .setAudience(idp.audience)
      .setSubject(user.sub)
      .setIssuedAt(iat)
      .setExpirationTime(iat + idp.tokenLifetimeS)
      .sign(key);
  };

  /** An access token and a new refresh token for `user`. */
  const tokensFor = async (user: TestIdentity) => {
    const accessToken = await sign(user, privateKey);
    const refreshToken = b64url(randomBytes(24));
    refreshTokens.set(refreshToken, user);
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: idp.tokenLifetimeS,
      refresh_token: refreshToken,
      id_token: accessToken,
    };
  };

  async function token(req: http.IncomingMessage, res: http.ServerResponse) {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const form = new URLSearchParams(text);
    const refuse = (why: string) => {
      idp.tokenRequests.push({ ok: false, why });
      json(res, 400, { error: 'invalid_grant', error_description: why });
    };
    if (form.get('grant_type') === 'refresh_token') {
      const user = refreshTokens.get(form.get('refresh_token') ?? '');
      refreshTokens.delete(form.get('refresh_token') ?? ''); // rotated: each refresh token serves once
      const why = idp.refuseRefresh
        ? 'the session has ended'
        : !user
          ? 'unknown or used refresh token'
          : form.get('client_id') !== idp.clientId
            ? 'client_id differs'
            : undefined;
      idp.refreshRequests.push(why ? { ok: false, why } : { ok: true });
      if (why || !user) return json(res, 400, { error: 'invalid_grant', error_description: why });
      return json(res, 200, await tokensFor(user));
    }
    const grant = grants.get(form.get('code') ?? '');
    if (form.get('grant_type') !== 'authorization_code') return refuse('grant_type must be authorization_code');
    if (!grant) return refuse('unknown or used code');
    grants.delete(form.get('code')!);
    if (form.get('client_id') !== grant.clientId) return refuse('client_id differs from the authorization request');
    if (form.get('redirect_uri') !== grant.redirectUri) return refuse('redirect_uri differs');
    const verifier = form.get('code_verifier') ?? '';
    if (b64url(createHash('sha256').update(verifier).digest()) !== grant.challenge)
      return refuse('code_verifier does not match the code_challenge');
    idp.tokenRequests.push({ ok: true });
    json(res, 200, await tokensFor(grant.user));
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'content-type, accept',
      });
      return res.end();
    }
    if (url.pathname === '/.well-known/openid-configuration')
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: idp.jwksUrl,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    if (url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      idp.authorizeRequests.push(q);
      const redirect = q.get('redirect_uri');
      const problem =
        q.get('client_id') !== idp.clientId
          ? 'unknown client_id'
          : q.get('response_type') !== 'code'
            ? 'response_type must be code'
            : q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')
              ? 'PKCE with S256 is required'
              : !redirect
                ? 'redirect_uri is required'
                : undefined;
      if (problem || !redirect) return json(res, 400, { error: 'invalid_request', error_description: problem });
      const code = b64url(randomBytes(24));
      grants.set(code, {
        clientId: idp.clientId,
        redirectUri: redirect,
        challenge: q.get('code_challenge')!,
        user: idp.user,
      });
      const back = new URL(redirect);
      back.searchParams.set('code', code);
      if (q.get('state') !== null) back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (url.pathname === '/token' && req.method === 'POST') return token(req, res);
    json(res, 404, { error: 'not_found' });
  }

  return idp;
}
