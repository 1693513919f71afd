// Chooses the adapter of a cluster by its `type` (cluster-adapters.ts): each type's factory builds one for the
// stored document (its secrets unsealed), rebuilt when the document changes.
import { ApplicationFailure } from '@temporalio/activity';
import { FailureType, type ClusterAdapter } from '../../domain/driver';
import { unsealClusterSecrets } from '../../lib/cluster-secrets';
import type { Config } from '../../lib/config';
import { Collections, type Store } from '../../lib/mongo';
import { adapterOf } from './cluster-adapters';
import type { StoredCluster } from './cluster-types';
import type { DriverPlacements } from './k8s/options';
import { mongoPlacements } from './placements';

type ClusterDoc = StoredCluster;

export interface LookupOptions {
  /**
   * An adapter checked against the cluster's document at most this long ago is returned without reading it
   * again: a watch asks on every poll, so a change of the cluster (its URL, credentials, namespace) reaches
   * running watches within this time, for one read per cluster instead of one per poll of each driver.
   * Default 0: the document is read every time (launches, removals: they act on the cluster as it is now).
   */
  maxAgeMs?: number;
}

/** The adapter of a cluster by name; a cluster that does not exist is a non-retryable ClusterNotFound failure. */
export type AdapterLookup = (clusterName: string, opts?: LookupOptions) => Promise<ClusterAdapter>;

/**
 * What a k8s adapter is rebuilt for: the whole stored document, so any change of it (URL, CA, credentials,
 * namespace, image, storages, defaults) builds a new adapter with a new connection. Secrets are sealed with a
 * fresh IV on every write, so a resent credential counts as a change too (a rebuild, never a stale one).
 */
export const adapterStamp = (doc: ClusterDoc): string => JSON.stringify(doc);

export function createAdapterRegistry(config: Config, store: Store): AdapterLookup {
  // By cluster name, whatever the type, with when the document was last compared.
  const byName = new Map<string, { stamp: string; adapter: ClusterAdapter; checkedAt: number }>();
  // Per cluster id, kept across the adapters of its document's versions.
  const placements = new Map<string, DriverPlacements>();
  const placementsOf = (id: string) => {
    if (!placements.has(id)) placements.set(id, mongoPlacements(store, id));
    return placements.get(id)!;
  };
  return async function adapterFor(clusterName: string, opts: LookupOptions = {}): Promise<ClusterAdapter> {
    const cached = byName.get(clusterName);
    if (cached && opts.maxAgeMs && Date.now() - cached.checkedAt <= opts.maxAgeMs) return cached.adapter;
    const doc = await store.col<ClusterDoc>(Collections.clusters).findOne({ name: clusterName });
    if (!doc) {
      byName.delete(clusterName);
      throw ApplicationFailure.nonRetryable(`cluster '${clusterName}' does not exist`, FailureType.CLUSTER_NOT_FOUND);
    }
    const stamp = adapterStamp(doc);
    if (cached && cached.stamp === stamp) {
      cached.checkedAt = Date.now();
      return cached.adapter;
    }
    const cluster = unsealClusterSecrets(config.SECRET_KEY, doc);
    const id = String(doc.id ?? doc._id ?? clusterName);
    const adapter = adapterOf({ cluster, config, placements: placementsOf(id) });
    byName.set(clusterName, { stamp, adapter, checkedAt: Date.now() });
    return adapter;
  };
}
