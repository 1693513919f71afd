// Entry point of the API process: Koa on API_PORT with the Socket.IO and SSE streams.
import { loadConfig } from '../lib/config';
import { logger } from '../lib/log';
import { connectStore, prepareStore } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { startApi } from './server';

const log = logger('api');

async function main() {
  const config = loadConfig();
  const store = await connectStore(config);
  await prepareStore(store);
  const temporal = await connectTemporal(config);
  const api = await startApi({ config, store, temporal });
  log.info('listening', { port: config.API_PORT, docs: `/api/v1/openapi.json` });

  const shutdown = async () => {
    log.info('shutting down');
    await api.close();
    await temporal.connection.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
}

main().catch((e) => {
  log.error('failed to start', { err: e });
  process.exit(1);
});
