// A cluster's secret fields: sealed by the API, masked in responses, unsealed by the worker.
import { describe, expect, it } from 'vitest';
import {
  clusterSecretValues,
  MASK,
  maskSecret,
  sealClusterSecrets,
  unsealClusterSecrets,
} from '../../lib/cluster-secrets';
import { encryptSecret, isEncrypted } from '../../lib/crypto';

const KEY = '0f'.repeat(32);

describe('cluster secrets', () => {
  const body = {
    name: 'prod',
    url: 'https://k8s:6443',
    caCert: 'not a secret',
    clientKey: 'PRIVATE KEY',
    password: 'hunter22',
    storages: { s3: { sparkBucket: 'spark', accessKey: 'AKIA1234', secretKey: 'very-secret' } },
  };

  it('seals every secret field and nothing else; unsealing gives the body back', () => {
    const sealed = sealClusterSecrets(KEY, body);
    const storage = (sealed.storages as Record<string, Record<string, unknown>>).s3;
    for (const v of [sealed.clientKey, sealed.password, storage.accessKey, storage.secretKey])
      expect(isEncrypted(v)).toBe(true);
    expect(sealed).toMatchObject({ name: 'prod', url: 'https://k8s:6443', caCert: 'not a secret' });
    expect(storage.sparkBucket).toBe('spark');
    expect(JSON.stringify(sealed)).not.toMatch(/hunter22|AKIA1234|very-secret|PRIVATE KEY/);
    expect(unsealClusterSecrets(KEY, sealed)).toEqual(body);
  });

  it('in an update, MASK keeps the stored value and an empty string removes it', () => {
    const stored = sealClusterSecrets(KEY, body);
    const update = sealClusterSecrets(
      KEY,
      {
        password: MASK,
        clientKey: '',
        storages: { s3: { secretKey: MASK, accessKey: 'NEW-KEY' }, other: { secretKey: MASK } },
      },
      stored,
    );
    expect(update.password).toBe(stored.password);
    expect(update.clientKey).toBeUndefined();
    const storages = update.storages as Record<string, Record<string, unknown>>;
    expect(storages.s3.secretKey).toBe((stored.storages as Record<string, Record<string, unknown>>).s3.secretKey);
    expect(unsealClusterSecrets(KEY, update)).toMatchObject({
      password: 'hunter22',
      storages: { s3: { accessKey: 'NEW-KEY', secretKey: 'very-secret' } },
    });
    // MASK for a secret never stored leaves nothing.
    expect(storages.other.secretKey).toBeUndefined();
  });

  it('masks what is stored sealed and shows nothing for what is not set', () => {
    expect(maskSecret(encryptSecret(KEY, 'x'))).toBe(MASK);
    expect(maskSecret(undefined)).toBeUndefined();
    expect(maskSecret('plain')).toBeUndefined();
  });

  it('unsealing with another key fails instead of returning garbage', () => {
    expect(() => unsealClusterSecrets('1e'.repeat(32), sealClusterSecrets(KEY, body))).toThrow();
  });

  it('lists the plain secrets of at least 4 characters, to scrub them from messages', () => {
    expect(clusterSecretValues({ ...body, clientKeyPassphrase: 'abc' })).toEqual([
      'hunter22',
      'PRIVATE KEY',
      'AKIA1234',
      'very-secret',
    ]);
  });
});
