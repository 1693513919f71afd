// OIDC sign-in from the browser: the authorization-code flow with PKCE for a public client (no client secret).
// `startOidcSignIn` reads the issuer's discovery document, keeps a random `state` and `code_verifier` in
// sessionStorage (this tab only) and goes to the issuer's authorization endpoint; the issuer sends the browser
// back to the console with `?code=…&state=…`, and `finishOidcSignIn` checks the state, exchanges the code and the
// verifier at the token endpoint, and returns the access token, which the console then sends as its bearer
// credential. The redirect URI is the console's own URL (origin + path, no query, no hash).

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
 * Completes a sign-in the issuer sent the browser back from: the access token. Always takes the code and
 * state out of the address bar and forgets the verifier, whether it succeeds or throws (with the reason).
 */
export async function finishOidcSignIn(): Promise<string> {
  const q = new URLSearchParams(location.search);
  const raw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  const pending = raw ? (JSON.parse(raw) as Pending) : undefined;
  history.replaceState(null, '', `${location.pathname}${pending?.hash ?? location.hash}`);
  if (q.get('error'))
    throw new Error(`the identity provider refused the sign-in: ${q.get('error_description') ?? q.get('error')}`);
  if (!pending) throw new Error('this sign-in was not started in this browser tab; sign in again');
  if (q.get('state') !== pending.state)
    throw new Error('the sign-in answer does not match this tab (state); sign in again');
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code: q.get('code') ?? '',
    redirect_uri: pending.redirectUri,
    client_id: pending.clientId,
    code_verifier: pending.verifier,
  });
  let res: Response;
  try {
    res = await fetch(pending.tokenEndpoint, { method: 'POST', body, headers: { Accept: 'application/json' } });
  } catch (err) {
    throw new Error(`the identity provider's token endpoint cannot be reached: ${(err as Error).message}`);
  }
  const data = (await res.json().catch(() => ({}))) as {
    access_token?: string;
    error?: string;
    error_description?: string;
  };
  if (!res.ok || !data.access_token)
    throw new Error(
      `the identity provider did not issue a token: ${data.error_description ?? data.error ?? `HTTP ${res.status}`}`,
    );
  return data.access_token;
}
