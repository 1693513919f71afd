// Roles and the one table that says which role each call of the REST API needs. Roles are ordered: an
// operator may do what a viewer may, an admin what an operator may. The table is matched before the body
// is read, so it works on the request's method and path alone (the path under /api/v1).

export const Role = { viewer: 'viewer', operator: 'operator', admin: 'admin' } as const;
export type Role = (typeof Role)[keyof typeof Role];
export const ROLES: readonly Role[] = [Role.viewer, Role.operator, Role.admin];

/** What a call needs: a role, or `public` (no credentials at all). */
export type Need = Role | 'public';

/** Method + path → what the call needs. The Livy app passes its own. */
export type RoleFor = (method: string, path: string) => Need;

export const hasRole = (held: Role, needed: Role): boolean => ROLES.indexOf(held) >= ROLES.indexOf(needed);

export const isRole = (v: unknown): v is Role => typeof v === 'string' && (ROLES as readonly string[]).includes(v);

const READ = ['GET', 'HEAD', 'OPTIONS'];
export const isRead = (method: string): boolean => READ.includes(method.toUpperCase());

interface Rule {
  /** Methods the rule covers; `read` is GET/HEAD/OPTIONS, `write` every other method, `any` both. */
  methods: 'read' | 'write' | 'any';
  /** Path under /api/v1: exact, or a prefix when it ends with `*`. */
  path: string;
  need: Need;
  why: string;
}

/** First match wins. Anything not listed: reads need viewer, every other call operator. */
export const API_RULES: readonly Rule[] = [
  { methods: 'read', path: '/health', need: 'public', why: 'load balancers and probes carry no credentials' },
  { methods: 'read', path: '/openapi.json', need: 'public', why: 'clients learn the security schemes from it' },
  { methods: 'any', path: '/auth/keys*', need: Role.admin, why: 'API keys' },
  { methods: 'read', path: '/auth/config', need: 'public', why: 'the console asks how to sign in before it can' },
  { methods: 'read', path: '/auth/whoami', need: Role.viewer, why: 'the caller itself' },
  { methods: 'any', path: '/audit*', need: Role.admin, why: 'the audit trail' },
  { methods: 'write', path: '/cluster*', need: Role.admin, why: 'clusters' },
  { methods: 'read', path: '*', need: Role.viewer, why: 'reads and streams' },
  { methods: 'write', path: '*', need: Role.operator, why: 'jobs, groups, executions, schedules, SQL' },
];

const matches = (rule: Rule, method: string, path: string): boolean => {
  const read = isRead(method);
  if (rule.methods === 'read' && !read) return false;
  if (rule.methods === 'write' && read) return false;
  if (!rule.path.endsWith('*')) return path === rule.path;
  const prefix = rule.path.slice(0, -1);
  // `/cluster*` covers `/cluster` and `/cluster/...`, not `/clusters`.
  return prefix === '' || path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
};

/** The role table of a set of rules, as a function. */
export const roleTable =
  (rules: readonly Rule[]): RoleFor =>
  (method, path) => {
    const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
    for (const rule of rules) if (matches(rule, method, p)) return rule.need;
    return isRead(method) ? Role.viewer : Role.operator;
  };

/** The REST API's table, for paths under /api/v1. */
export const apiRoleFor: RoleFor = roleTable(API_RULES);

/** Reads need viewer, everything else operator: a default for other apps (e.g. a Livy-compatible one). */
export const readWriteRoles: RoleFor = (method) => (isRead(method) ? Role.viewer : Role.operator);
