// The secret fields of a cluster document, in one place for both sides: the API seals them before
// storing and masks them in responses; the worker unseals them to connect to the cluster.
// Sealed values are lib/crypto.ts strings (`enc:v1:...`).
import { decryptSecret, encryptSecret, isEncrypted } from './crypto';

/** What a response shows in place of a stored secret. Sending it back in an update keeps the stored value. */
export const MASK = '******';
/** Secret fields of the cluster itself (API server credentials). */
export const CLUSTER_SECRET_FIELDS = ['password', 'clientKey', 'clientKeyPassphrase', 'token'] as const;
/** Secret fields of each of its `storages`. */
export const STORAGE_SECRET_FIELDS = ['accessKey', 'secretKey'] as const;

type Doc = Record<string, unknown>;
type Storages = Record<string, Doc>;

/** Applies `f` to the value of each field that is present, keeping the others as they are. */
function mapFields(obj: Doc, fields: readonly string[], f: (v: unknown, field: string) => unknown): Doc {
  const out = { ...obj };
  for (const field of fields) if (field in out) out[field] = f(out[field], field);
  return out;
}

const mapStorages = (storages: unknown, f: (key: string, s: Doc) => Doc): Storages =>
  Object.fromEntries(Object.entries((storages ?? {}) as Storages).map(([k, s]) => [k, f(k, s)]));

/**
 * Encrypts every secret of an incoming cluster body. A string field is sealed; MASK keeps the value
 * in `stored` (the document being updated); '' removes the secret.
 */
export function sealClusterSecrets(key: string, body: Doc, stored?: Doc): Doc {
  const seal = (v: unknown, kept: unknown) =>
    typeof v !== 'string' ? v : v === MASK ? kept : v === '' ? undefined : encryptSecret(key, v);
  const out = mapFields(body, CLUSTER_SECRET_FIELDS, (v, f) => seal(v, stored?.[f]));
  if (out.storages && typeof out.storages === 'object') {
    const prev = (stored?.storages ?? {}) as Storages;
    out.storages = mapStorages(out.storages, (k, s) =>
      mapFields(s, STORAGE_SECRET_FIELDS, (v, f) => seal(v, prev[k]?.[f])),
    );
  }
  return out;
}

/** The cluster document with its secrets decrypted, for the worker's connection to the cluster. */
export function unsealClusterSecrets<T extends Doc>(key: string, doc: T): T {
  const unseal = (v: unknown) => (isEncrypted(v) ? decryptSecret(key, v as string) : v);
  const out = mapFields(doc, CLUSTER_SECRET_FIELDS, unseal);
  out.storages = mapStorages(doc.storages, (_, s) => mapFields(s, STORAGE_SECRET_FIELDS, unseal));
  return out as T;
}

/** What a response shows for a stored secret field: MASK when set, nothing otherwise. */
export const maskSecret = (v: unknown): string | undefined => (isEncrypted(v) ? MASK : undefined);

/** The plain secrets of an unsealed cluster (at least 4 characters), to scrub them from messages. */
export function clusterSecretValues(cluster: object): string[] {
  const c = cluster as Doc;
  const storages = Object.values((c.storages ?? {}) as Storages);
  return [
    ...CLUSTER_SECRET_FIELDS.map((f) => c[f]),
    ...storages.flatMap((s) => STORAGE_SECRET_FIELDS.map((f) => s[f])),
  ].filter((s): s is string => typeof s === 'string' && s.length >= 4);
}
