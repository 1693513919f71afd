// What the local adapter's children (drivers, runners, SQL engines, pip) see of the worker's environment, and
// that a driver's log is read only from the driver's own file.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalAdapter } from '../../activities/adapters/local/adapter';
import { childEnv } from '../../activities/adapters/local/child-env';
import { failureSummary, readLineRange } from '../../activities/adapters/local/logs';

const SERVICE_ENV = {
  SECRET_KEY: 'b'.repeat(64),
  AUTH_ADMIN_KEY: 'admin-key-of-the-service-0123456789',
  AUTH_MODE: 'on',
  OIDC_ISSUER: 'https://id.example.com',
  MONGO_URL: 'mongodb://svc:mongo-pw@db:27017/',
  TEMPORAL_ADDRESS: 'temporal:7233',
  TEMPORAL_NAMESPACE: 'prod',
  AWS_ACCESS_KEY_ID: 'AKIA-SERVICE',
  AWS_SECRET_ACCESS_KEY: 'service-aws-secret',
  GITHUB_TOKEN: 'ghp-service-token',
  DB_PASSWORD: 'service-db-password',
  NODE_OPTIONS: '--require /srv/hook.js',
  LD_PRELOAD: '/srv/x.so',
  PIP_INDEX_URL: 'https://pypi.internal/simple',
  HTTPS_PROXY: 'http://proxy:3128',
};
const HOST_ENV = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/svc',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TZ: 'UTC',
  JAVA_HOME: '/usr/lib/jvm/java-17',
  TMPDIR: '/tmp',
  SSL_CERT_FILE: '/etc/ssl/certs/ca.pem',
};

describe('the environment of local children', () => {
  it("a driver gets the host's basics and what it adds, none of the service's settings", () => {
    const env = childEnv(
      'driver',
      { SPARK_HOME: '/opt/spark', RUNNER_DIRECT_SECRET: 'own' },
      {
        ...SERVICE_ENV,
        ...HOST_ENV,
      },
    );
    expect(env).toEqual({ ...HOST_ENV, SPARK_HOME: '/opt/spark', RUNNER_DIRECT_SECRET: 'own' });
  });

  it('pip also gets its own settings and proxies, still none of the service', () => {
    const env = childEnv('pip', { PIP_DISABLE_PIP_VERSION_CHECK: '1' }, { ...SERVICE_ENV, ...HOST_ENV });
    expect(env).toEqual({
      ...HOST_ENV,
      PIP_INDEX_URL: 'https://pypi.internal/simple',
      HTTPS_PROXY: 'http://proxy:3128',
      PIP_DISABLE_PIP_VERSION_CHECK: '1',
    });
  });

  it('what the child adds wins over the host', () => {
    expect(childEnv('driver', { PATH: '/opt/bin' }, { PATH: '/usr/bin' }).PATH).toBe('/opt/bin');
  });
});

describe("a driver's log is its own file", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'local-logs-'));
  const driverDir = path.join(root, 'drivers');
  const serviceKey = path.join(root, 'secret.key');
  writeFileSync(serviceKey, 'Error: the-service-secret-key-material\n');
  const adapter = createLocalAdapter({
    SPARK_HOME: '/nonexistent',
    PYTHON: 'python3',
    DRIVER_DIR: driverDir,
    STACK_DIR: root,
    LOCAL_SPARK_THREADS: 1,
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads a regular driver.log', async () => {
    mkdirSync(path.join(driverDir, 'job-ok-1'), { recursive: true });
    writeFileSync(path.join(driverDir, 'job-ok-1', 'driver.log'), 'one\ntwo\n');
    const [entry] = await adapter.logs('job-ok-1', { from: 0, size: 10 });
    expect(entry.log).toEqual(['one', 'two']);
  });

  it('serves nothing through a driver.log replaced by a link to a file of the service', async () => {
    const dir = path.join(driverDir, 'job-link-1');
    mkdirSync(dir, { recursive: true });
    symlinkSync(serviceKey, path.join(dir, 'driver.log'));
    const entries = await adapter.logs('job-link-1', { from: 0, size: 10 });
    expect(JSON.stringify(entries)).not.toContain('the-service-secret-key-material');
    expect(await readLineRange(path.join(dir, 'driver.log'), 0, 10)).toEqual([]);
    // Nor through the failure message made from the log's end.
    expect(await failureSummary(path.join(dir, 'driver.log'))).toBeUndefined();
  });

  it('serves nothing through a driver folder replaced by a link', async () => {
    const elsewhere = path.join(root, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(path.join(elsewhere, 'driver.log'), 'the-service-secret-key-material\n');
    symlinkSync(elsewhere, path.join(driverDir, 'job-dirlink-1'));
    expect(await adapter.logs('job-dirlink-1', { from: 0, size: 10 })).toEqual([]);
  });
});
