// Entry point of the worker process. More workers on the same task queue add capacity.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../lib/config';
import { logger } from '../lib/log';
import { connectStore, prepareStore } from '../lib/mongo';
import { createWorker } from './worker';

const log = logger('worker');

async function main() {
  const config = loadConfig();
  // The SDK's own log lines (worker state changes) at the service's level, warnings by default at info.
  Runtime.install({ logger: new DefaultLogger(config.LOG_LEVEL === 'debug' ? 'DEBUG' : 'WARN') });
  const store = await connectStore(config);
  await prepareStore(store);
  const { worker, run } = await createWorker(config, store);
  // run() resolves after shutdown(); the SDK installs SIGTERM/SIGINT handlers that call it.
  log.info('polling', { taskQueue: worker.options.taskQueue, temporal: config.TEMPORAL_ADDRESS });
  await run();
  await store.close();
  log.info('stopped');
}

main().catch((e) => {
  log.error('worker failed', { err: e });
  process.exit(1);
});
