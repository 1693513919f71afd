// Where each k8s driver was launched, kept in MongoDB so that every process (worker, API launching at submit)
// and every adapter of a cluster (one per version of its document) agrees: a driver launched in namespace A
// is watched, read and removed in A after the cluster's namespace became B. One record per driver, made
// before its pod and dropped once the driver is removed; an in-process cache spares the watch's reads.
import type { DriverPlacements } from './k8s/options';
import { Collections, type Store } from '../../lib/mongo';

interface PlacementDoc {
  _id: string;
  namespace: string;
  time: number;
}

/** Records kept in memory at most: a driver's is read once per process, then served from here. */
const CACHE_MAX = 50_000;
/** A driver without a record (launched before records existed) is asked about again after this. */
const MISS_TTL_MS = 10_000;

/** Placements of one cluster's drivers; `clusterId` keeps them apart from another cluster's of the same name. */
export function mongoPlacements(store: Store, clusterId: string): DriverPlacements {
  const col = store.col<PlacementDoc>(Collections.placements);
  const known = new Map<string, string>();
  const misses = new Map<string, number>();
  const key = (driverId: string) => `${clusterId}/${driverId}`;
  const remember = (driverId: string, ns: string) => {
    if (known.size >= CACHE_MAX) known.delete(known.keys().next().value!);
    known.set(driverId, ns);
    misses.delete(driverId);
  };
  const read = async (driverId: string) => (await col.findOne({ _id: key(driverId) }))?.namespace;
  return {
    async place(driverId, namespace) {
      const cached = known.get(driverId);
      if (cached) return cached;
      try {
        await col.insertOne({ _id: key(driverId), namespace, time: Date.now() });
        remember(driverId, namespace);
        return namespace;
      } catch (e) {
        if ((e as { code?: number }).code !== 11000) throw e;
      }
      // Placed before (a retried launch, the API's launch at submit): that one stands.
      const ns = (await read(driverId)) ?? namespace;
      remember(driverId, ns);
      return ns;
    },
    async get(driverId) {
      const cached = known.get(driverId);
      if (cached) return cached;
      const missed = misses.get(driverId);
      if (missed !== undefined && Date.now() - missed < MISS_TTL_MS) return undefined;
      const ns = await read(driverId);
      if (ns) remember(driverId, ns);
      else {
        if (misses.size >= CACHE_MAX) misses.clear();
        misses.set(driverId, Date.now());
      }
      return ns;
    },
    async forget(driverId) {
      known.delete(driverId);
      misses.delete(driverId);
      await col.deleteOne({ _id: key(driverId) });
    },
  };
}
