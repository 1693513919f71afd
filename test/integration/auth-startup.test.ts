// Safe defaults: the API binds loopback and runs without authentication by default; it refuses to start on
// any other address without authentication (in startApi and as the real process), and with authentication
// but no way in (no OIDC issuer, no live admin key). Auth off still records the audit trail.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startApi } from '../../api/server';
import { loadConfig, ROOT, type Config } from '../../lib/config';
import { call, startHarness, type Harness } from '../harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(async () => h?.stop());

const start = (config: Config, host: string) =>
  startApi({ config, store: h.store, temporal: h.temporal, port: 0, host });

describe('safe defaults', () => {
  it('binds 127.0.0.1 with authentication off unless configured', () => {
    const c = loadConfig({ SECRET_KEY: 'a'.repeat(64) });
    expect(c.API_HOST).toBe('127.0.0.1');
    expect(c.AUTH_MODE).toBe('off');
    expect(() => loadConfig({ SECRET_KEY: 'a'.repeat(64), AUTH_ADMIN_KEY: 'short' })).toThrow(/AUTH_ADMIN_KEY/);
    expect(() => loadConfig({ SECRET_KEY: 'a'.repeat(64), AUTH_MODE: 'maybe' })).toThrow(/AUTH_MODE/);
  });

  it('serves everyone on loopback with auth off, and still records who changed what', async () => {
    expect((await call(h, 'GET', '/job')).status).toBe(200);
    expect((await call(h, 'GET', '/auth/whoami')).body).toEqual({
      principal: 'anonymous',
      role: 'admin',
      authentication: 'off',
    });
    const saved = await call(h, 'POST', '/sql/statement', { name: 'audited', statement: 'SELECT 1' });
    expect(saved.status).toBe(200);
    const audit = await call(h, 'GET', `/audit?resourceId=${saved.body.id}`);
    expect(audit.body.content).toEqual([
      expect.objectContaining({ principal: 'anonymous', method: 'POST', path: '/api/v1/sql/statement', status: 200 }),
    ]);
  });

  it('refuses a non-loopback address without authentication, and says why', async () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3']) {
      await expect(start(h.config, host)).rejects.toThrow(
        new RegExp(`refusing to listen on ${host.replace(/\./g, '\\.')} without authentication.*AUTH_MODE=on`),
      );
    }
    const local = await start(h.config, 'localhost');
    await local.close();
  });

  it('refuses AUTH_MODE=on when no one could call the API; a bootstrap key revoked stays revoked', async () => {
    const on = { ...h.config, AUTH_MODE: 'on' as const };
    await expect(start(on, '127.0.0.1')).rejects.toThrow(/no OIDC_ISSUER and no live admin API key/);

    const key = `bootstrap-${randomBytes(24).toString('hex')}`;
    const api = await start({ ...on, AUTH_ADMIN_KEY: key }, '0.0.0.0');
    try {
      const auth = { authorization: `Bearer ${key}` };
      expect((await call(api, 'GET', '/job')).status).toBe(401);
      expect((await call(api, 'GET', '/job', undefined, auth)).status).toBe(200);
      expect((await call(api, 'DELETE', '/auth/keys/bootstrap', undefined, auth)).status).toBe(200);
      expect((await call(api, 'GET', '/job', undefined, auth)).status).toBe(401);
    } finally {
      await api.close();
    }
    await expect(start({ ...on, AUTH_ADMIN_KEY: key }, '127.0.0.1')).rejects.toThrow(/Set AUTH_ADMIN_KEY/);
    const fresh = `bootstrap-${randomBytes(24).toString('hex')}`;
    const again = await start({ ...on, AUTH_ADMIN_KEY: fresh }, '127.0.0.1');
    try {
      expect((await call(again, 'GET', '/job', undefined, { authorization: `Bearer ${fresh}` })).status).toBe(200);
      expect((await call(again, 'GET', '/job', undefined, { authorization: `Bearer ${key}` })).status).toBe(401);
    } finally {
      await again.close();
    }
  });

  it('the API process exits on API_HOST=0.0.0.0 without authentication, saying why', async () => {
    const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['api/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        MONGO_URL: inject('mongoUrl'),
        MONGO_DB: h.config.MONGO_DB,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        API_HOST: '0.0.0.0',
        API_PORT: '0',
        AUTH_MODE: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(output).toMatch(/refusing to listen on 0\.0\.0\.0 without authentication/);
  });
});
