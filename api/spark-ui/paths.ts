// What the Spark UI proxy may ask a driver or the History Server for: a path checked character by character
// (no encoding, no path parameters, no dot segments, no empty segments, so no spelling reaches another path
// than the one written), and for the History Server only the job's own application.

/**
 * The characters of a path segment: RFC 3986 pchar without pct-encoded (`%`) and without `;`, which Jetty
 * (Spark's server) reads as the start of path parameters and strips before it resolves dot segments, so
 * `/static/..;/history/<another app>` would be a `..` this check never saw. Spark's paths need neither.
 */
const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,=:@-]*$/;
/** A query string: the same and `/`, `?`, and `%` (query values are Spark's own to decode, never a path). */
const QUERY = /^[A-Za-z0-9._~!$&'()*+,;=:@/?%-]*$/;

/**
 * The path after a proxy prefix as sent (`ctx.path`, not decoded), or undefined when it is no plain path:
 * `%` anywhere (`%2e%2e`, `%2f`), `;` (`..;`), a backslash, `.` or `..` segments, `//`, anything but pchars.
 * Empty means the root.
 */
export function cleanPath(rest: string): string | undefined {
  if (rest === '') return '/';
  if (!rest.startsWith('/')) return undefined;
  const segments = rest.slice(1).split('/');
  for (const [i, s] of segments.entries()) {
    if (!SEGMENT.test(s) || s === '.' || s === '..') return undefined;
    // Only the last segment may be empty (a trailing slash, as in Spark's /jobs/).
    if (s === '' && i < segments.length - 1) return undefined;
  }
  return rest;
}

/** The query string to forward (without `?`), or undefined when it holds anything but plain characters. */
export const cleanQuery = (q: string): string | undefined => (QUERY.test(q) ? q : undefined);

/** An application id as Spark makes them (local-…, spark-…, app-…): nothing that could be a path. */
export const APP_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Ids that may be put into a path prefix and the pages Spark renders with it. */
export const PROXY_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,200}$/;

/**
 * Whether the History Server path belongs to application `appId` (its pages, its REST resources) or is one
 * of the static files every page loads; the History Server's own list of every application is not proxied.
 */
export function historyPathAllowed(p: string, appId: string): boolean {
  const under = (prefix: string) => p === prefix || p.startsWith(`${prefix}/`);
  return under(`/history/${appId}`) || under(`/api/v1/applications/${appId}`) || p.startsWith('/static/');
}

/** The live UI's paths that change something (kill buttons, also turned off in the driver): never proxied. */
export const liveUiPathAllowed = (p: string): boolean => !/\/kill(\/|$)/.test(p);
