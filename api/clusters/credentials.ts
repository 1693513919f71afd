// Stored credentials follow the address they were given for, never a new one: an update that changes a
// cluster's `url` (its Kubernetes API server) must send its API server credentials again, and one that
// changes a storage's `endpoint` that storage's keys; keeping them (leaving them out, or sending the mask)
// would hand them to whatever host the new address names. Sending '' removes a credential instead.
import { createPrivateKey } from 'node:crypto';
import { CLUSTER_SECRET_FIELDS, MASK, STORAGE_SECRET_FIELDS } from '../../lib/cluster-secrets';
import { conflict } from '../errors';

type Doc = Record<string, unknown>;

/** A value the update sends for a secret field: a new one, or '' (remove); absent or the mask keep the stored one. */
const sent = (v: unknown) => typeof v === 'string' && v !== MASK;

/** The stored secrets an update would keep although the address they are sent to changes. */
export function credentialsKeptAcrossMove(stored: Doc, body: Doc): string[] {
  const kept: string[] = [];
  if (typeof body.url === 'string' && body.url !== stored.url) {
    for (const f of CLUSTER_SECRET_FIELDS) if (stored[f] !== undefined && !sent(body[f])) kept.push(f);
  }
  const before = (stored.storages ?? {}) as Record<string, Doc>;
  for (const [key, s] of Object.entries((body.storages ?? {}) as Record<string, Doc>)) {
    const old = before[key];
    if (!old || (s.endpoint ?? '') === (old.endpoint ?? '')) continue;
    // `storages` replaces the stored ones whole: a secret left out is gone, only the mask keeps it.
    for (const f of STORAGE_SECRET_FIELDS) if (old[f] !== undefined && s[f] === MASK) kept.push(`storages.${key}.${f}`);
  }
  return kept;
}

/** 409 when an update would keep credentials across a change of address, naming the fields to send again. */
export function checkCredentialsResent(stored: Doc, body: Doc): void {
  const kept = credentialsKeptAcrossMove(stored, body);
  if (!kept.length) return;
  const what = [
    ...(kept.some((f) => !f.startsWith('storages.')) ? ['url'] : []),
    ...(kept.some((f) => f.startsWith('storages.')) ? ['storage endpoint'] : []),
  ].join(' and ');
  throw conflict(
    `the ${what} changes, so the stored credentials are not kept for the new address: send ${kept.join(', ')} ` +
      "again in the same request (or '' to remove them)",
  );
}

/**
 * 409 when a client key cannot be used: not a PEM private key (plain or base64), encrypted without
 * clientKeyPassphrase, or a passphrase that does not decrypt it. Checked when the cluster is written, so the
 * mistake is answered there and not by every later job on the cluster. The answer never carries the key.
 */
export function checkClientKey(c: Record<string, unknown>): void {
  const key = typeof c.clientKey === 'string' && c.clientKey !== '' ? c.clientKey : undefined;
  const passphrase =
    typeof c.clientKeyPassphrase === 'string' && c.clientKeyPassphrase !== '' ? c.clientKeyPassphrase : undefined;
  if (!key) {
    if (passphrase) throw conflict('clientKeyPassphrase: there is no clientKey for it to decrypt');
    return;
  }
  const pem = key.includes('-----BEGIN') ? key : Buffer.from(key, 'base64').toString('utf8');
  try {
    createPrivateKey({ key: pem, format: 'pem', ...(passphrase ? { passphrase } : {}) });
  } catch {
    throw conflict(
      passphrase
        ? 'clientKeyPassphrase does not decrypt clientKey (or clientKey is not a PEM private key)'
        : 'clientKey is not a PEM private key, plain or base64 (an encrypted key needs clientKeyPassphrase)',
    );
  }
}
