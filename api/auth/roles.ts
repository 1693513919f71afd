// Roles. Roles are ordered: an operator may do what a viewer may, an admin what an operator may. Which role
// a call needs is declared by the route itself (RouteDef.role in api/routing.ts, the Livy app's table, the
// stream catalog's namespaces, /metrics), and checked on the route that matched: there is no path table
// here, so no spelling of a path can be judged by other rules than the route that answers it.

export const Role = { viewer: 'viewer', operator: 'operator', admin: 'admin' } as const;
export type Role = (typeof Role)[keyof typeof Role];
export const ROLES: readonly Role[] = [Role.viewer, Role.operator, Role.admin];

/** What a call needs: a role, or `public` (no credentials at all). */
export type Need = Role | 'public';
export const NEEDS: readonly Need[] = ['public', ...ROLES];

export const hasRole = (held: Role, needed: Role): boolean => ROLES.indexOf(held) >= ROLES.indexOf(needed);

export const isRole = (v: unknown): v is Role => typeof v === 'string' && (ROLES as readonly string[]).includes(v);

const READ = ['GET', 'HEAD', 'OPTIONS'];
export const isRead = (method: string): boolean => READ.includes(method.toUpperCase());
