// OIDC bearer tokens: a JWT signed by a key of the issuer's JWKS (fetched and cached by jose), from that
// issuer, for our audience (required: the issuer signs tokens for its other applications too), not expired.
// Its role comes from a configurable claim.
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { OIDC_AUDIENCE_REQUIRED, type Config } from '../../lib/config';
import { isRole, ROLES, type Role } from './roles';

type OidcConfig = Pick<Config, 'OIDC_ISSUER' | 'OIDC_AUDIENCE' | 'OIDC_JWKS_URL' | 'OIDC_ROLE_CLAIM' | 'OIDC_ROLE_MAP'>;

export interface TokenIdentity {
  subject: string;
  /** Undefined when the role claim names no known role. */
  role?: Role;
}

/** Why a token was refused: said to the client as 401. */
export class TokenError extends Error {}

/** The issuer's keys cannot be had (discovery or JWKS fetch failed): not the client's fault, 503. */
export class IssuerUnavailable extends Error {
  constructor(cause: unknown) {
    super('the OIDC issuer cannot be reached to check the token; try again shortly', { cause });
  }
}

const CLOCK_TOLERANCE_S = 30;

/** `group=role;group2=role2` → map; a bad role name is a configuration error. */
export function parseRoleMap(text: string): Map<string, Role> {
  const map = new Map<string, Role>();
  for (const pair of text.split(';').map((p) => p.trim())) {
    if (!pair) continue;
    const at = pair.lastIndexOf('=');
    const [value, role] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    if (at <= 0 || !isRole(role))
      throw new Error(`invalid configuration: OIDC_ROLE_MAP: '${pair}' must be value=${ROLES.join('|')}`);
    map.set(value, role);
  }
  return map;
}

/** The highest role the claim's values name, directly or through the map. */
export function roleFromClaims(payload: JWTPayload, claim: string, map: Map<string, Role>): Role | undefined {
  let value: unknown = payload;
  for (const part of claim.split('.')) value = (value as Record<string, unknown> | undefined)?.[part];
  const values = (Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[ ,]+/) : []).map(String);
  const held = values.map((v) => map.get(v) ?? (isRole(v) ? v : undefined)).filter((r): r is Role => !!r);
  return [...ROLES].reverse().find((r) => held.includes(r));
}

export interface TokenVerifier {
  verify(token: string): Promise<TokenIdentity>;
}

export function createTokenVerifier(config: OidcConfig): TokenVerifier | undefined {
  const issuer = config.OIDC_ISSUER;
  if (!issuer) return undefined;
  const audience = config.OIDC_AUDIENCE;
  if (!audience) throw new Error(OIDC_AUDIENCE_REQUIRED);
  const roleMap = parseRoleMap(config.OIDC_ROLE_MAP);
  let jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  const keySet = () =>
    (jwks ??= discoverJwks(issuer, config.OIDC_JWKS_URL).catch((e: unknown) => {
      jwks = undefined; // try again on the next request
      throw e;
    }));
  return {
    async verify(token) {
      const keys = await keySet();
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer,
          audience,
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ['exp', 'sub'],
        }));
      } catch (e) {
        const why = describe(e);
        throw why ? new TokenError(why) : new IssuerUnavailable(e);
      }
      return { subject: payload.sub!, role: roleFromClaims(payload, config.OIDC_ROLE_CLAIM, roleMap) };
    },
  };
}

async function discoverJwks(issuer: string, jwksUrl: string | undefined) {
  if (jwksUrl) return createRemoteJWKSet(new URL(jwksUrl));
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`OIDC discovery at ${url} answered HTTP ${res.status}`);
    const doc = (await res.json()) as { jwks_uri?: string };
    if (!doc.jwks_uri) throw new Error(`OIDC discovery at ${url} has no jwks_uri`);
    return createRemoteJWKSet(new URL(doc.jwks_uri));
  } catch (e) {
    throw new IssuerUnavailable(e);
  }
}

/** jose's reasons, in words that say what to fix and nothing of the token itself; undefined: not the token's fault. */
function describe(e: unknown): string | undefined {
  if (e instanceof joseErrors.JWTExpired) return 'the bearer token has expired';
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'iss') return 'the bearer token is from another issuer';
    if (e.claim === 'aud') return 'the bearer token is for another audience';
    return `the bearer token's '${e.claim}' claim is not acceptable (${e.reason})`;
  }
  if (e instanceof joseErrors.JWKSNoMatchingKey) return "the bearer token is not signed by a key of the issuer's JWKS";
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'the bearer token has an invalid signature';
  // Not jose's verdict on the token: the JWKS could not be fetched (network, timeout, HTTP status, bad JSON).
  const fetchFailed =
    !(e instanceof joseErrors.JOSEError) ||
    e.code === 'ERR_JOSE_GENERIC' ||
    e instanceof joseErrors.JWKSTimeout ||
    e instanceof joseErrors.JWKSInvalid;
  if (fetchFailed) return undefined;
  return 'the bearer token is not a valid JWT';
}
