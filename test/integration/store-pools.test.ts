// lib/mongo.ts quietPools: the connection pools of the store's client check their minimum size every
// POOL_CHECK_MS, not every 100 ms (the driver's default, a wake-up ten times a second in every idle process).
// The period is an internal option of the driver: this test fails if a driver update stops reading it.
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { POOL_CHECK_MS, connectStore, type Store } from '../../lib/mongo';

let store: Store;
beforeAll(async () => {
  store = await connectStore({ MONGO_URL: inject('mongoUrl'), MONGO_DB: 'store-pools-test' });
});
afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

it("the store's connection pools check their minimum size every POOL_CHECK_MS", async () => {
  await store.db.command({ ping: 1 });
  const servers = (
    store.client as unknown as {
      topology?: { s?: { servers?: Map<string, { pool?: { options?: Record<string, unknown> } }> } };
    }
  ).topology?.s?.servers;
  const pools = [...(servers?.values() ?? [])].map((s) => s.pool?.options);
  expect(pools.length).toBeGreaterThan(0);
  for (const options of pools) {
    expect(options?.minPoolSizeCheckFrequencyMS).toBe(POOL_CHECK_MS);
    expect(options?.minPoolSize).toBe(0);
  }
  // And the client still works as before: a write and a read through the pool.
  await store.col('names').insertOne({ _id: 'pool-check' as never });
  expect(await store.col('names').countDocuments({ _id: 'pool-check' as never })).toBe(1);
});
