import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // Each workflow test file starts its own Temporal dev server; one at a time on a small machine.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // One Temporal dev server and one MongoDB-protocol server for the whole run (test/global-setup.ts).
          globalSetup: ['test/global-setup.ts'],
          // Spark drivers are heavy on a 2-core machine: end-to-end files run one at a time.
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
