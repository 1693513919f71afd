// OIDC sign-in from the browser: the authorization-code flow with PKCE for a public client (no client secret).
// `startOidcSignIn` reads the issuer's discovery document, keeps a random `state` and `code_verifier` in
// sessionStorage (this tab only) and goes to the issuer's authorization endpoint; the issuer sends the browser
// back to the console with `?code=…&state=…`, and `finishOidcSignIn` checks the state, exchanges the code and the
// verifier at the token endpoint, and returns the access token, which the console then sends as its bearer
// credential. The redirect URI is the console's own URL (origin + path, no query, no hash).
//
// When the issuer also hands out a refresh token, it is kept beside the access token (sessionStorage, this tab
// only), and `refreshOidcToken` trades it for a new access token before the old one expires, or when the
// service has refused it (api.ts retries the call once): a signed-in user stays signed in for as long as the
// issuer allows, instead of being signed out when the first access token expires.

/** What GET /auth/config says about OIDC when the console may sign in through it. */
export interface OidcSettings {
  issuer: string;
  clientId: string;
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
}

/** What is kept between leaving for the issuer and coming back. */
interface Pending {
  state: string;
  verifier: string;
  clientId: string;
  tokenEndpoint: string;
  redirectUri: string;
  /** The console page (hash) to return to. */
  hash: string;
}

const PENDING_KEY = 'spark-orchestrator.oidc-pending';
const REFRESH_KEY = 'spark-orchestrator.oidc-refresh';

/** An access token from the token endpoint, and how long it lasts (seconds) when the issuer says. */
export interface OidcTokens {
  accessToken: string;
  expiresIn?: number;
}

/** What a refresh needs, kept while signed in through OIDC. */
interface Refresh {
  refreshToken: string;
  tokenEndpoint: string;
  clientId: string;
}

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

/** Posts a grant to the token endpoint; the answer, or an Error with the issuer's reason. */
async function tokenRequest(endpoint: string, body: URLSearchParams): Promise<TokenAnswer & { access_token: string }> {
  let res: Response;
  try {
    res = await fetch(endpoint, { method: 'POST', body, headers: { Accept: 'application/json' } });
  } catch (err) {
    throw new Error(`the identity provider's token endpoint cannot be reached: ${(err as Error).message}`);
  }
  const data = (await res.json().catch(() => ({}))) as TokenAnswer;
  if (!res.ok || !data.access_token)
    throw new Error(
      `the identity provider did not issue a token: ${data.error_description ?? data.error ?? `HTTP ${res.status}`}`,
    );
  return data as TokenAnswer & { access_token: string };
}

const tokensOf = (a: TokenAnswer & { access_token: string }): OidcTokens => ({
  accessToken: a.access_token,
  ...(typeof a.expires_in === 'number' && a.expires_in > 0 ? { expiresIn: a.expires_in } : {}),
});

/** Whether this tab holds a refresh token (signed in through OIDC with an issuer that gives them). */
export const canRefreshOidc = (): boolean => sessionStorage.getItem(REFRESH_KEY) !== null;

/** Forgets the refresh token (sign-out). */
export const forgetOidcRefresh = (): void => sessionStorage.removeItem(REFRESH_KEY);

/**
 * A new access token for the refresh token this tab holds (kept, or replaced when the issuer rotates it);
 * undefined when there is none. A refused refresh forgets it and throws the issuer's reason.
 */
export async function refreshOidcToken(): Promise<OidcTokens | undefined> {
  const raw = sessionStorage.getItem(REFRESH_KEY);
  if (!raw) return undefined;
  const r = JSON.parse(raw) as Refresh;
  let answer: TokenAnswer & { access_token: string };
  try {
    answer = await tokenRequest(
      r.tokenEndpoint,
      new URLSearchParams({ grant_type: 'refresh_token', refresh_token: r.refreshToken, client_id: r.clientId }),
    );
  } catch (err) {
    forgetOidcRefresh();
    throw err;
  }
  if (answer.refresh_token)
    sessionStorage.setItem(REFRESH_KEY, JSON.stringify({ ...r, refreshToken: answer.refresh_token }));
  return tokensOf(answer);
}

export const redirectUri = (): string => `${location.origin}${location.pathname}`;

/** "Sign in with <this>": the issuer's host. */
export const issuerHost = (issuer: string): string => {
  try {
    return new URL(issuer).host;
  } catch {
    return issuer;
  }
};

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

const randomString = (bytes = 32): string => base64url(crypto.getRandomValues(new Uint8Array(bytes)));

async function challengeOf(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

async function discover(issuer: string): Promise<Discovery> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { Accept: 'application/json' } });
  } catch (err) {
    throw new Error(`the identity provider cannot be reached (${url}): ${(err as Error).message}`);
  }
  if (!res.ok) throw new Error(`the identity provider's discovery document (${url}) answered HTTP ${res.status}`);
  const doc = (await res.json()) as Partial<Discovery>;
  if (!doc.authorization_endpoint || !doc.token_endpoint)
    throw new Error(`the identity provider's discovery document (${url}) names no authorization or token endpoint`);
  if (doc.issuer && doc.issuer.replace(/\/$/, '') !== issuer.replace(/\/$/, ''))
    throw new Error(`the discovery document is for issuer ${doc.issuer}, not ${issuer}`);
  return doc as Discovery;
}

/** Leaves for the issuer's authorization endpoint; resolves only if that fails (it throws then). */
export async function startOidcSignIn(settings: OidcSettings): Promise<void> {
  const doc = await discover(settings.issuer);
  const pending: Pending = {
    state: randomString(),
    verifier: randomString(48),
    clientId: settings.clientId,
    tokenEndpoint: doc.token_endpoint,
    redirectUri: redirectUri(),
    hash: location.hash,
  };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(doc.authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', pending.clientId);
  url.searchParams.set('redirect_uri', pending.redirectUri);
  url.searchParams.set('scope', 'openid');
  url.searchParams.set('state', pending.state);
  url.searchParams.set('code_challenge', await challengeOf(pending.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  location.assign(url.toString());
}

/** Whether this page load is the issuer sending the browser back (`?code=` or `?error=` with `state`). */
export const isOidcReturn = (): boolean => {
  const q = new URLSearchParams(location.search);
  return q.has('state') && (q.has('code') || q.has('error'));
};

/**
 * Completes a sign-in the issuer sent the browser back from: the access token (and keeps the refresh token, if
 * any). Always takes the code and state out of the address bar and forgets the verifier, whether it succeeds or
 * throws (with the reason).
 */
export async function finishOidcSignIn(): Promise<OidcTokens> {
  const q = new URLSearchParams(location.search);
  const raw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  forgetOidcRefresh();
  const pending = raw ? (JSON.parse(raw) as Pending) : undefined;
  history.replaceState(null, '', `${location.pathname}${pending?.hash ?? location.hash}`);
  if (q.get('error'))
    throw new Error(`the identity provider refused the sign-in: ${q.get('error_description') ?? q.get('error')}`);
  if (!pending) throw new Error('this sign-in was not started in this browser tab; sign in again');
  if (q.get('state') !== pending.state)
    throw new Error('the sign-in answer does not match this tab (state); sign in again');
  const answer = await tokenRequest(
    pending.tokenEndpoint,
    new URLSearchParams({
      grant_type: 'authorization_code',
      code: q.get('code') ?? '',
      redirect_uri: pending.redirectUri,
      client_id: pending.clientId,
      code_verifier: pending.verifier,
    }),
  );
  if (answer.refresh_token) {
    const r: Refresh = {
      refreshToken: answer.refresh_token,
      tokenEndpoint: pending.tokenEndpoint,
      clientId: pending.clientId,
    };
    sessionStorage.setItem(REFRESH_KEY, JSON.stringify(r));
  }
  return tokensOf(answer);
}
