// Hash routing: `#/jobs/abc?state=FAILED`. The server only ever serves index.html, and a reload or a shared
// link opens the same page. `route()` matches the current hash against patterns like `/jobs/:jobId`.
import { useEffect, useState } from 'preact/hooks';

/** What every page component gets: the route's `:params` and the hash's query. */
export interface PageProps {
  params: Record<string, string>;
  query: URLSearchParams;
}

export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, qs = ''] = raw.split('?');
  return { path: path || '/', query: new URLSearchParams(qs) };
}

/** The current location; re-renders on every hash change. */
export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const on = () => setLoc(current());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return loc;
}

/** `#/path?query`, for links. */
export const href = (path: string, query?: Record<string, string | undefined>): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) q.set(k, v);
  const s = q.toString();
  return `#${path}${s ? `?${s}` : ''}`;
};

export function navigate(path: string, query?: Record<string, string | undefined>, replace = false): void {
  const h = href(path, query);
  if (replace) history.replaceState(null, '', h);
  else history.pushState(null, '', h);
  dispatchEvent(new HashChangeEvent('hashchange'));
}

/** Params of `pattern` (segments like `:jobId`) if `path` matches it. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return undefined;
  }
  return params;
}
