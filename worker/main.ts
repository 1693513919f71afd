// Entry point of the worker process. More workers on the same task queue add capacity.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/config';
import { logger } from '../lib/log';
import { connectStore, prepareStore } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { ensureRetentionSchedule } from '../activities/retention';
import { createWorker } from './worker';

const log = logger('worker');

// `npm run build` puts the workflow bundle beside the compiled entry (dist/workflow-bundle.js). Run from the
// sources (tsx) there is none, and the worker bundles the workflows at start, so it never runs stale ones.
// WORKFLOW_BUNDLE names another prebuilt bundle (test beds start several workers from one bundle).
const PREBUILT_BUNDLE = process.env.WORKFLOW_BUNDLE || fileURLToPath(new URL('./workflow-bundle.js', import.meta.url));

async function main() {
  const config = loadConfig();
  // The SDK's own log lines (worker state changes) at the service's level, warnings by default at info.
  // With WORKER_METRICS_ADDRESS, the SDK serves its worker metrics and the adapters' call latencies
  // (activities/adapters/timed.ts) in Prometheus format at http://<address>/metrics.
  Runtime.install({
    logger: new DefaultLogger(config.LOG_LEVEL === 'debug' ? 'DEBUG' : 'WARN'),
    ...(config.WORKER_METRICS_ADDRESS
      ? {
          telemetryOptions: {
            metrics: { prometheus: { bindAddress: config.WORKER_METRICS_ADDRESS, useSecondsForDurations: true } },
          },
        }
      : {}),
  });
  const store = await connectStore(config);
  await prepareStore(store);
  const bundle = existsSync(PREBUILT_BUNDLE) ? { codePath: PREBUILT_BUNDLE } : undefined;
  const { worker, hostWorker, run } = await createWorker(config, store, { bundle });
  // The hourly retention sweep (RETENTION_DAYS): a Temporal Schedule, created once by whichever worker comes first.
  const temporal = await connectTemporal(config);
  await ensureRetentionSchedule(temporal, config.TASK_QUEUE).finally(() => temporal.connection.close());
  // run() resolves after shutdown(); the SDK installs SIGTERM/SIGINT handlers that call it.
  log.info('polling', {
    taskQueue: worker.options.taskQueue,
    hostTaskQueue: hostWorker.options.taskQueue,
    temporal: config.TEMPORAL_ADDRESS,
    workflows: bundle ? 'prebuilt' : 'bundled at start',
  });
  await run();
  await store.close();
  log.info('stopped');
}

main().catch((e) => {
  log.error('worker failed', { err: e });
  process.exit(1);
});
