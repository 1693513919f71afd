// Activities come from a factory that takes their clients, so tests can pass others.
import type { Client } from '@temporalio/client';
import type { Config } from '../lib/config';
import type { Store } from '../lib/mongo';
import { createAdapterRegistry, type AdapterLookup } from './adapters/registry';
import { createConnectServerActivities } from './connect-servers';
import { createDriverActivities } from './drivers';
import { createProjection } from './projection';
import { createRetentionActivities } from './retention';
import { createScheduleActivities } from './schedules';
import { createSqlEngineActivities } from './sql-engines';

export interface ActivityDeps {
  config: Config;
  store: Store;
  /** Replaces the adapter lookup (tests). */
  adapterFor?: AdapterLookup;
  /** For the activities that manage Temporal Schedules. */
  temporal?: Client;
}

export function createActivities({ config, store, adapterFor, temporal }: ActivityDeps) {
  const projection = createProjection(store);
  const adapters = adapterFor ?? createAdapterRegistry(config, store);
  return {
    ...projection,
    ...createScheduleActivities(temporal),
    ...createDriverActivities(config, adapters, projection),
    ...createSqlEngineActivities(config, adapters),
    ...createConnectServerActivities(config, adapters),
    ...createRetentionActivities(config, store),
  };
}
export type Activities = ReturnType<typeof createActivities>;
