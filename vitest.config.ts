import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import DurationSequencer from './test/sequencer';

// Integration files are light and mostly wait (backoffs, timeouts, Temporal): they run side by side, one per two
// cores, at least 2 and up to 4 (INTEGRATION_WORKERS overrides). Measured on 2 cores (2026-11-27, 43 files): with
// 2 workers each file took 20 % longer (653 s of file time against 544 s with one) and the project 474 s in all,
// about 3 minutes less than one worker. Spark drivers are heavy: end-to-end files run one at a time.
const integrationWorkers =
  Number(process.env.INTEGRATION_WORKERS) || Math.min(4, Math.max(2, Math.floor(availableParallelism() / 2)));
// One Temporal dev server and one MongoDB-protocol server per run, shared by both projects (test/global-setup.ts).
const servers = {
  setupFiles: ['test/setup-logs.ts'],
  globalSetup: ['test/global-setup.ts'],
  testTimeout: 180_000,
  hookTimeout: 180_000,
};

export default defineConfig({
  test: {
    // A test's console output (its own lines, the service's log lines, nested tools' reports) is shown only
    // when the test fails: a passing run's log is the reporter's alone (test/setup-logs.ts routes the
    // service's logs through the console). `--silent=false` shows everything.
    silent: 'passed-only',
    // Longest files first, from vitest's cache or test/durations.json (test/sequencer.ts says why).
    sequence: { sequencer: DurationSequencer },
    projects: [
      // No servers: pure functions and single modules.
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles: ['test/setup-logs.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      // Real Temporal and MongoDB-protocol servers; fake or recording cluster adapters, the fake Kubernetes API.
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          ...servers,
          maxWorkers: integrationWorkers,
          sequence: { groupOrder: 1 },
        },
      },
      // Real Spark (local mode) behind the whole stack.
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          ...servers,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
