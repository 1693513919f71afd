// Activities come from a factory that takes their clients, so tests can pass others.
import type { Config } from '../lib/config';
import type { Store } from '../lib/mongo';
import type { ClusterAdapter } from './adapters/types';
import { createAdapterRegistry, createDriverActivities } from './drivers';
import { createProjection } from './projection';

export interface ActivityDeps {
  config: Config;
  store: Store;
  /** Replaces the adapter lookup (tests). */
  adapterFor?: (clusterName: string) => Promise<ClusterAdapter>;
}

export function createActivities({ config, store, adapterFor }: ActivityDeps) {
  return {
    ...createProjection(store),
    ...createDriverActivities(config, adapterFor ?? createAdapterRegistry(config, store)),
  };
}
export type Activities = ReturnType<typeof createActivities>;
