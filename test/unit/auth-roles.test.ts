// The roles every route declares, role claims of tokens, loopback addresses and the audit trail's resource
// ids: pure functions, no servers. (That the declared role is what each spelling of a path gets is proven
// against the real API in test/integration/security-authz.test.ts.)
import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../api/app';
import { resourceIdOf } from '../../api/audit/trail';
import type { ApiDeps } from '../../api/deps';
import { livyRoutes } from '../../api/livy/app';
import { METRICS_ROLE } from '../../api/metrics';
import { parseRoleMap, roleFromClaims } from '../../api/auth/oidc';
import { hasRole, NEEDS } from '../../api/auth/roles';
import { isLoopback } from '../../api/auth/startup';
import { STREAMS } from '../../api/streams/catalog';
import { loadConfig } from '../../lib/config';

const deps = {
  config: loadConfig({ SECRET_KEY: 'a'.repeat(64) }),
  store: { col: () => ({}) },
  temporal: {},
  feeds: { jobs: {}, results: {}, sqlHistory: {} },
} as unknown as ApiDeps;

describe('the roles routes declare', () => {
  const routes = allRoutes(deps);
  const table = routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r.role] as const);
  const need = Object.fromEntries(table);

  it('gives every route one role, and each method + path once', () => {
    for (const [k, n] of table) expect(NEEDS, k).toContain(n);
    expect(new Set(table.map(([k]) => k)).size).toBe(table.length);
  });

  it('leaves only the health check and the sign-in settings open; every other route needs a role', () => {
    expect(table.filter(([, n]) => n === 'public').map(([k]) => k)).toEqual(['GET /health', 'GET /auth/config']);
    expect(METRICS_ROLE).toBe('viewer');
  });

  it('gives reads and streams to viewers', () => {
    for (const [k, n] of table)
      if (k.startsWith('GET ') && !/auth\/keys|auth\/config|audit|health/.test(k)) expect(n, k).toBe('viewer');
    expect(need['GET /job/updates']).toBe('viewer');
    for (const s of STREAMS) expect(s.role, s.namespace).toBe('viewer');
  });

  it('gives submit, execute, SQL, schedules and job control to operators', () => {
    for (const k of [
      'POST /job/submit',
      'POST /job/:jobId/cancel',
      'DELETE /job/:jobId',
      'POST /group',
      'POST /group/:groupId/job/execute',
      'POST /schedule',
      'DELETE /schedule/:scheduleId',
      'POST /sql/execute',
      'POST /sql/engine/:clusterId',
      'POST /connect/server/:clusterId',
      'DELETE /connect/session/:sessionId',
    ])
      expect(need[k], k).toBe('operator');
    // POST /spark-ui/session changes nothing but the caller's own cookie, which lets a viewer's browser read
    // the Spark UIs (api/spark-ui/session.ts): a viewer's.
    expect(need['POST /spark-ui/session']).toBe('viewer');
    for (const [k, n] of table)
      if (!k.startsWith('GET ') && !/ \/(cluster|auth\/keys|spark-ui\/session)/.test(k)) expect(n, k).toBe('operator');
  });

  it('gives clusters, keys and the audit trail to admins', () => {
    for (const [k, n] of table)
      if (/ \/(cluster|auth\/keys|audit)/.test(k) && !k.startsWith('GET /cluster')) expect(n, k).toBe('admin');
    expect(need['GET /auth/keys']).toBe('admin');
    expect(need['GET /auth/keys/:keyId']).toBe('admin');
    expect(need['POST /auth/keys']).toBe('admin');
    expect(need['GET /audit']).toBe('admin');
    expect(need['GET /cluster']).toBe('viewer');
    expect(need['PUT /cluster/:clusterId']).toBe('admin');
  });

  it("gives the Livy API's reads to viewers and the rest to operators", () => {
    for (const r of livyRoutes(deps))
      expect(r.role, `${r.method} ${r.path}`).toBe(r.method === 'get' ? 'viewer' : 'operator');
  });

  it('orders roles', () => {
    expect(hasRole('admin', 'operator')).toBe(true);
    expect(hasRole('operator', 'viewer')).toBe(true);
    expect(hasRole('viewer', 'operator')).toBe(false);
    expect(hasRole('operator', 'admin')).toBe(false);
  });
});

describe('roles from token claims', () => {
  const map = parseRoleMap('spark-admins=admin; ops = operator');
  it('reads nested claims, lists and space-separated strings, and takes the highest', () => {
    expect(roleFromClaims({ realm_access: { roles: ['viewer', 'ops'] } }, 'realm_access.roles', map)).toBe('operator');
    expect(roleFromClaims({ roles: 'viewer spark-admins' }, 'roles', map)).toBe('admin');
    expect(roleFromClaims({ roles: ['other'] }, 'roles', map)).toBeUndefined();
    expect(roleFromClaims({}, 'a.b.c', map)).toBeUndefined();
  });
  it('refuses a map naming an unknown role', () => {
    expect(() => parseRoleMap('x=root')).toThrow(/OIDC_ROLE_MAP/);
    expect(() => parseRoleMap('=admin')).toThrow(/OIDC_ROLE_MAP/);
  });
});

describe('loopback addresses', () => {
  it('knows loopback from the rest', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopback(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.1', 'example.com', '127.example.com'])
      expect(isLoopback(h), h).toBe(false);
  });
});

describe('resource ids of audit records', () => {
  it('takes a path id first, else the id a create answered with, never other fields', () => {
    expect(resourceIdOf({ groupId: 'g', scale: '3' }, { jobInstanceId: 'i' })).toBe('g');
    expect(resourceIdOf({}, { jobId: 'j' })).toBe('j');
    expect(resourceIdOf(undefined, { id: 's' })).toBe('s');
    expect(resourceIdOf(undefined, { key: 'sok_secret', name: 'n' })).toBeNull();
    expect(resourceIdOf(undefined, 'text')).toBeNull();
  });
});
