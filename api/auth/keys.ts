// API keys: random secrets shown once at creation and stored only as a SHA-256 hash (a 256-bit random
// key needs no slow hash: nothing can be guessed from it). A key is found by the hash of what the client
// sends. The bootstrap admin key comes from AUTH_ADMIN_KEY and is stored the same way, as key `bootstrap`.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Filter } from 'mongodb';
import { z } from 'zod';
import type { Config } from '../../lib/config';
import { logger } from '../../lib/log';
import { Collections, type Store } from '../../lib/mongo';
import { findOr404 } from '../errors';
import { findPage, searchFilter, type ListQuery, type Page } from '../list';
import { Role, ROLES } from './roles';

const log = logger('auth');

export const KEY_PREFIX = 'sok_';
export const BOOTSTRAP_KEY_ID = 'bootstrap';

export interface ApiKeyDoc {
  _id: string;
  keyId: string;
  name: string;
  role: Role;
  hash: string;
  createdTime: number;
  createdBy: string;
  revokedTime?: number;
  revokedBy?: string;
}

/** What lists and gets show of a key: never its hash. */
export const ApiKey = z.object({
  keyId: z.string(),
  name: z.string(),
  role: z.enum(ROLES as [Role, ...Role[]]),
  createdTime: z.number(),
  createdBy: z.string(),
  revokedTime: z.number().nullable(),
  revokedBy: z.string().nullable(),
});
export type ApiKey = z.infer<typeof ApiKey>;

export const NewApiKey = z.object({
  name: z.string().trim().min(1).max(200),
  role: z.enum(ROLES as [Role, ...Role[]]),
});

export const CreatedApiKey = ApiKey.extend({ key: z.string().describe('the key itself: shown this once only') });

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

const view = (d: ApiKeyDoc): ApiKey => ({
  keyId: d.keyId,
  name: d.name,
  role: d.role,
  createdTime: d.createdTime,
  createdBy: d.createdBy,
  revokedTime: d.revokedTime ?? null,
  revokedBy: d.revokedBy ?? null,
});

const keys = (store: Store) => store.col<ApiKeyDoc>(Collections.apiKeys);

export async function createKey(
  store: Store,
  input: z.infer<typeof NewApiKey>,
  createdBy: string,
): Promise<ApiKey & { key: string }> {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  const keyId = randomUUID();
  const doc: ApiKeyDoc = {
    _id: keyId,
    keyId,
    name: input.name,
    role: input.role,
    hash: hashKey(key),
    createdTime: Date.now(),
    createdBy,
  };
  await keys(store).insertOne(doc);
  return { ...view(doc), key };
}

/** A page of keys, newest first; revoked ones only when asked. */
export async function listKeys(store: Store, lq: ListQuery, includeRevoked: boolean): Promise<Page<ApiKey>> {
  const filter = {
    ...(includeRevoked ? {} : { revokedTime: { $exists: false } }),
    ...searchFilter(lq.search, ['name', 'keyId']),
  };
  return findPage(keys(store), filter as Filter<ApiKeyDoc>, lq, view);
}

export async function getKey(store: Store, keyId: string): Promise<ApiKey> {
  return view(await findOr404(keys(store), { _id: keyId }, `no API key ${keyId}`));
}

/** Revokes at once: the next request with the key answers 401. Revoking twice is not an error. */
export async function revokeKey(store: Store, keyId: string, revokedBy: string): Promise<ApiKey> {
  const col = keys(store);
  await col.updateOne(
    { _id: keyId, revokedTime: { $exists: false } },
    { $set: { revokedTime: Date.now(), revokedBy } },
  );
  return view(await findOr404(col, { _id: keyId }, `no API key ${keyId}`));
}

/** The live key a client sent, or undefined (unknown or revoked). */
export async function findKey(store: Store, key: string): Promise<ApiKeyDoc | undefined> {
  const doc = await keys(store).findOne({ hash: hashKey(key) });
  return doc && doc.revokedTime === undefined ? doc : undefined;
}

/**
 * Stores AUTH_ADMIN_KEY as the `bootstrap` admin key. A new value replaces the old one (and is live);
 * the same value keeps its record, so a bootstrap key revoked through the API stays revoked.
 */
export async function ensureBootstrapKey(store: Store, config: Pick<Config, 'AUTH_ADMIN_KEY'>): Promise<void> {
  if (!config.AUTH_ADMIN_KEY) return;
  const hash = hashKey(config.AUTH_ADMIN_KEY);
  const col = keys(store);
  const existing = await col.findOne({ _id: BOOTSTRAP_KEY_ID });
  if (existing?.hash === hash) {
    if (existing.revokedTime !== undefined) log.warn('AUTH_ADMIN_KEY was revoked through the API; it stays revoked');
    return;
  }
  const doc: ApiKeyDoc = {
    _id: BOOTSTRAP_KEY_ID,
    keyId: BOOTSTRAP_KEY_ID,
    name: 'bootstrap admin key (AUTH_ADMIN_KEY)',
    role: Role.admin,
    hash,
    createdTime: Date.now(),
    createdBy: 'config',
  };
  try {
    await col.replaceOne({ _id: BOOTSTRAP_KEY_ID }, doc, { upsert: true });
  } catch (e) {
    // Two API processes starting at once: the other one stored the same key.
    if ((e as { code?: number }).code !== 11000) throw e;
  }
  log.info('bootstrap admin key stored (hashed)', { keyId: BOOTSTRAP_KEY_ID });
}

/** Whether any live admin key exists (so that a key-only deployment is not locked out). */
export async function hasLiveAdminKey(store: Store): Promise<boolean> {
  return (await keys(store).countDocuments({ role: Role.admin, revokedTime: { $exists: false } }, { limit: 1 })) > 0;
}
