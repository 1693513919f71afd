// Activities come from a factory that takes their clients, so tests can pass others.
import type { Config } from '../lib/config';
import type { Store } from '../lib/mongo';

export interface ActivityDeps {
  config: Config;
  store: Store;
}

export function createActivities(_deps: ActivityDeps) {
  return {};
}
export type Activities = ReturnType<typeof createActivities>;
