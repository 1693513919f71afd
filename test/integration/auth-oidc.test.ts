// Authentication with OIDC bearer tokens: JWTs checked against a JWKS this test serves itself (jose's
// generateKeyPair/exportJWK), the role from a nested claim and a value map; expired tokens, tokens of
// another issuer or audience (or none), or signed by a key outside the JWKS answer 401; an issuer without an
// audience is refused at start-up.
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../../api/server';
import { loadConfig } from '../../lib/config';
import { call, startHarness, type Harness } from '../harness';

const ISSUER = 'https://issuer.example.test/realms/spark';
const AUDIENCE = 'spark-orchestrator';
const KID = 'test-key-1';

let h: Harness;
let jwks: http.Server;
let jwksFetches = 0;
let signingKey: CryptoKey;
let strangerKey: CryptoKey;

const token = (
  claims: JWTPayload,
  o: { key?: CryptoKey; issuer?: string; audience?: string | null; expiresAt?: number } = {},
) => {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: KID }).setIssuer(o.issuer ?? ISSUER);
  // null: a token without `aud`.
  if (o.audience !== null) jwt.setAudience(o.audience ?? AUDIENCE);
  return jwt
    .setSubject((claims.sub as string | undefined) ?? 'alice')
    .setIssuedAt()
    .setExpirationTime(o.expiresAt ?? Math.floor(Date.now() / 1000) + 600)
    .sign(o.key ?? signingKey);
};

const roles = (...r: string[]) => ({ realm_access: { roles: r } });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  signingKey = pair.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'RS256', use: 'sig' };
  jwks = http.createServer((req, res) => {
    jwksFetches++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [publicJwk] }));
  });
  jwks.listen(0, '127.0.0.1');
  await once(jwks, 'listening');
  h = await startHarness({
    worker: false,
    env: {
      AUTH_MODE: 'on',
      OIDC_ISSUER: ISSUER,
      OIDC_AUDIENCE: AUDIENCE,
      OIDC_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/certs`,
      OIDC_ROLE_CLAIM: 'realm_access.roles',
      OIDC_ROLE_MAP: 'spark-admins=admin;spark-ops=operator',
    },
  });
});
afterAll(async () => {
  await h?.stop();
  jwks?.close();
});

describe('OIDC bearer tokens', () => {
  it('accepts a valid token and takes its role from the claim', async () => {
    const t = await token({ sub: 'vera', ...roles('offline_access', 'viewer') });
    expect((await call(h, 'GET', '/job', undefined, bearer(t))).status).toBe(200);
    const who = await call(h, 'GET', '/auth/whoami', undefined, bearer(t));
    expect(who.body).toEqual({ principal: 'oidc:vera', role: 'viewer', authentication: 'on' });
    expect(jwksFetches).toBeGreaterThan(0);
  });

  it('answers 403 to a viewer token that submits, and to a token that names no role', async () => {
    const viewer = await token(roles('viewer'));
    const submit = await call(h, 'POST', '/job/submit', { name: 'x' }, bearer(viewer));
    expect(submit).toMatchObject({ status: 403, body: { message: /needs the operator role/ } });
    const none = await token(roles('offline_access'));
    expect(await call(h, 'GET', '/job', undefined, bearer(none))).toMatchObject({
      status: 403,
      body: { message: /'realm_access.roles' claim names no role/ },
    });
  });

  it('maps claim values to roles and takes the highest', async () => {
    const ops = await token({ sub: 'otto', ...roles('viewer', 'spark-ops') });
    expect((await call(h, 'GET', '/auth/whoami', undefined, bearer(ops))).body.role).toBe('operator');
    // Past authorization: the service's own answer.
    expect((await call(h, 'DELETE', '/job/no-such-job', undefined, bearer(ops))).status).toBe(404);
    expect((await call(h, 'GET', '/audit', undefined, bearer(ops))).status).toBe(403);
    const admin = await token({ sub: 'ada', ...roles('spark-admins') });
    const audit = await call(h, 'GET', '/audit', undefined, bearer(admin));
    expect(audit.status).toBe(200);
    expect(audit.body.content).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ principal: 'oidc:otto', method: 'DELETE', resourceId: 'no-such-job', status: 404 }),
      ]),
    );
  });

  it('refuses an expired token with 401', async () => {
    const t = await token(roles('admin'), { expiresAt: Math.floor(Date.now() / 1000) - 3600 });
    const r = await call(h, 'GET', '/job', undefined, bearer(t));
    expect(r).toMatchObject({ status: 401, body: { message: 'the bearer token has expired' } });
  });

  it('refuses a token of another issuer, for another audience, or signed by a key outside the JWKS', async () => {
    const other = await token(roles('admin'), { issuer: 'https://evil.example.test' });
    expect(await call(h, 'GET', '/job', undefined, bearer(other))).toMatchObject({
      status: 401,
      body: { message: /another issuer/ },
    });
    const aud = await token(roles('admin'), { audience: 'someone-else' });
    expect(await call(h, 'GET', '/job', undefined, bearer(aud))).toMatchObject({
      status: 401,
      body: { message: /another audience/ },
    });
    const noAud = await token(roles('admin'), { audience: null });
    expect(await call(h, 'GET', '/job', undefined, bearer(noAud))).toMatchObject({
      status: 401,
      body: { message: /audience|'aud' claim/ },
    });
    const forged = await token(roles('admin'), { key: strangerKey });
    expect(await call(h, 'GET', '/job', undefined, bearer(forged))).toMatchObject({
      status: 401,
      body: { message: /invalid signature|not signed by a key/ },
    });
    const garbage = await call(h, 'GET', '/job', undefined, bearer('eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln'));
    expect(garbage.status).toBe(401);
  });

  it('refuses to start with an issuer but no audience, saying what to set', async () => {
    const env = { SECRET_KEY: 'a'.repeat(64), AUTH_MODE: 'on', OIDC_ISSUER: ISSUER };
    expect(() => loadConfig(env)).toThrow(/OIDC_AUDIENCE: is required with OIDC_ISSUER/);
    expect(() => loadConfig({ ...env, OIDC_AUDIENCE: '' })).toThrow(/OIDC_AUDIENCE/);
    expect(loadConfig({ ...env, OIDC_AUDIENCE: AUDIENCE }).OIDC_AUDIENCE).toBe(AUDIENCE);
    // A configuration built in code, past loadConfig: startApi refuses it before listening.
    await expect(
      startApi({
        config: { ...h.config, OIDC_AUDIENCE: undefined },
        store: h.store,
        temporal: h.temporal,
        port: 0,
        host: '127.0.0.1',
      }),
    ).rejects.toThrow(/OIDC_AUDIENCE: is required with OIDC_ISSUER/);
  });

  it("answers 503, not 401, while the issuer's keys cannot be fetched", async () => {
    const api = await startApi({
      config: { ...h.config, OIDC_JWKS_URL: 'http://127.0.0.1:1/certs' },
      store: h.store,
      temporal: h.temporal,
      port: 0,
      host: '127.0.0.1',
    });
    try {
      const r = await call(api, 'GET', '/job', undefined, bearer(await token(roles('viewer'))));
      expect(r).toMatchObject({ status: 503, body: { message: /OIDC issuer cannot be reached/ } });
    } finally {
      await api.close();
    }
  });

  it('guards SSE streams with the same tokens', async () => {
    const expired = await token(roles('viewer'), { expiresAt: Math.floor(Date.now() / 1000) - 3600 });
    expect((await fetch(h.url + '/job/updates', { headers: bearer(expired) })).status).toBe(401);
    const res = await fetch(h.url + '/job/updates', { headers: bearer(await token(roles('viewer'))) });
    expect(res.status).toBe(200);
    await res.body?.cancel();
  });
});
