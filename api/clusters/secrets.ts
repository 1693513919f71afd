// Secret-bearing cluster fields are stored encrypted with SECRET_KEY and never returned in clear:
// responses show MASK where a value is set, and MASK sent back in an update keeps the stored value.
import { encryptSecret, isEncrypted } from '../../lib/crypto';

export const MASK = '******';
const CLUSTER_SECRETS = ['clientKey', 'clientKeyPassphrase', 'password'] as const;
const STORAGE_SECRETS = ['accessKey', 'secretKey'] as const;

type Fields = Record<string, unknown>;

/** '' clears a secret, MASK keeps the stored one, anything else is encrypted. */
const sealOne = (key: string, v: unknown, stored: unknown) =>
  typeof v !== 'string' ? v : v === MASK ? stored : v === '' ? undefined : encryptSecret(key, v);

/** Encrypts every secret of an incoming body, given the stored document on an update. */
export function sealSecrets(key: string, body: Fields, stored?: Fields): Fields {
  const out = { ...body };
  for (const f of CLUSTER_SECRETS) if (f in out) out[f] = sealOne(key, out[f], stored?.[f]);
  if (out.storages && typeof out.storages === 'object') {
    const prev = (stored?.storages ?? {}) as Record<string, Fields>;
    out.storages = Object.fromEntries(
      Object.entries(out.storages as Record<string, Fields>).map(([k, s]) => {
        const sealed = { ...s };
        for (const f of STORAGE_SECRETS) if (f in sealed) sealed[f] = sealOne(key, sealed[f], prev[k]?.[f]);
        return [k, sealed];
      }),
    );
  }
  return out;
}

/** What a response shows for a stored secret: MASK, or nothing when none is stored. */
export const maskSecret = (v: unknown): string | undefined => (isEncrypted(v) ? MASK : undefined);
