// Entry point of the API process: Koa on API_PORT with the Socket.IO and SSE streams.
import http from 'node:http';
import { loadConfig } from '../lib/config';
import { logger } from '../lib/log';
import { connectStore, prepareStore } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { createApp, type ApiDeps } from './app';
import { attachSocketIo, createFeeds } from './streams';

const log = logger('api');

async function main() {
  const config = loadConfig();
  const store = await connectStore(config);
  await prepareStore(store);
  const temporal = await connectTemporal(config);
  const deps: ApiDeps = { config, store, temporal, feeds: createFeeds(store) };
  const app = createApp(deps);
  const server = http.createServer(app.callback());
  const io = attachSocketIo(server, deps.feeds!);
  await new Promise<void>((resolve) => server.listen(config.API_PORT, config.API_HOST, resolve));
  log.info('listening', { port: config.API_PORT, docs: `/api/v1/openapi.json` });

  const shutdown = async () => {
    log.info('shutting down');
    await io.close();
    server.close();
    await deps.feeds?.close();
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
