// The REST API as the console calls it: same origin, under /api/v1, with the signed-in user's credential as a
// bearer token. Every non-2xx answer becomes an ApiError carrying the service's own `message`, which pages
// show as it is. A 401 signs the user out (session.ts listens).
export const API = '/api/v1';

const CREDENTIAL_KEY = 'spark-orchestrator.credential';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The page envelope of every list. */
export interface Page<T> {
  content: T[];
  totalElements: number;
  totalPages: number;
  first: boolean;
  last: boolean;
  empty: boolean;
  page: { number: number; size: number; offset: number; paged: boolean };
}

export function credential(): string | undefined {
  return sessionStorage.getItem(CREDENTIAL_KEY) ?? undefined;
}

export function setCredential(value: string | undefined): void {
  if (value) sessionStorage.setItem(CREDENTIAL_KEY, value);
  else sessionStorage.removeItem(CREDENTIAL_KEY);
}

/**
 * Gets a fresh credential when the service refuses the current one (an expired OIDC access token): the call is
 * then made once more with it. Concurrent refusals share one refresh. Set by the session while signed in
 * through OIDC with a refresh token.
 */
let refresher: (() => Promise<string | undefined>) | undefined;
let refreshing: Promise<string | undefined> | undefined;
export function setCredentialRefresher(fn: (() => Promise<string | undefined>) | undefined): void {
  refresher = fn;
}
function refreshedCredential(): Promise<string | undefined> {
  if (!refresher) return Promise.resolve(undefined);
  refreshing ??= refresher()
    .catch(() => undefined)
    .finally(() => (refreshing = undefined));
  return refreshing;
}

type Listener = () => void;
const unauthorized = new Set<Listener>();
/** Called on every 401, e.g. an expired token. */
export function onUnauthorized(l: Listener): () => void {
  unauthorized.add(l);
  return () => unauthorized.delete(l);
}

/** Query parameters a page sends (numbers and flags written out; arrays repeated), not the server's parsed form. */
export type QueryParams = Record<string, string | number | boolean | undefined | null | (string | number)[]>;

/** `?a=1&b=x&b=y`: arrays repeat their name, empty values are left out. */
export function queryString(q: QueryParams = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) for (const x of v) p.append(k, String(x));
    else p.append(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/**
 * One call of the REST API. `body`: a plain object is sent as JSON, FormData as multipart. Resolves to the
 * parsed JSON body (undefined for an empty one); rejects with ApiError.
 */
export async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  opts: { query?: QueryParams; signal?: AbortSignal; retried?: boolean } = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const cred = credential();
  if (cred) headers.Authorization = `Bearer ${cred}`;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await fetch(`${API}${path}${queryString(opts.query)}`, {
      method,
      headers,
      body: payload,
      signal: opts.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, `the service cannot be reached: ${(err as Error).message}`);
  }
  const text = await res.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) {
    if (res.status === 401 && cred && !opts.retried) {
      // Refused while another call may already have refreshed it, or an access token that just expired.
      const fresh = credential() !== cred ? credential() : await refreshedCredential();
      if (fresh && fresh !== cred) return api<T>(method, path, body, { ...opts, retried: true });
    }
    if (res.status === 401) for (const l of unauthorized) l();
    const message =
      (data && typeof data === 'object' && typeof (data as { message?: unknown }).message === 'string'
        ? (data as { message: string }).message
        : undefined) ?? `${method} ${path} answered ${res.status}`;
    throw new ApiError(res.status, message);
  }
  return data as T;
}

export const get = <T>(path: string, query?: QueryParams, signal?: AbortSignal) =>
  api<T>('GET', path, undefined, { query, signal });
export const post = <T = unknown>(path: string, body?: unknown) => api<T>('POST', path, body);
export const put = <T = unknown>(path: string, body?: unknown) => api<T>('PUT', path, body);
export const del = <T = unknown>(path: string) => api<T>('DELETE', path);
