// Entry point of the API process: connects to MongoDB and Temporal, then serves on API_PORT, the
// Livy-compatible API on LIVY_PORT, and the Spark Connect gateway on CONNECT_PORT.
import { loadConfig } from '../lib/config';
import { logger } from '../lib/log';
import { connectStore, prepareStore } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { startConnectGatewayThread, type GatewayThread } from './connect/gateway-thread';
import { startLivy } from './livy/server';
import { startApi } from './server';

const log = logger('api');

async function main() {
  const config = loadConfig();
  const store = await connectStore(config);
  await prepareStore(store);
  const temporal = await connectTemporal(config);
  const api = await startApi({ config, store, temporal });
  log.info('listening', { port: config.API_PORT, docs: `/api/v1/openapi.json` });
  const livy = await startLivy(api.deps);
  log.info('livy listening', { port: config.LIVY_PORT });
  let connect: GatewayThread | undefined;
  try {
    // On a thread of its own, with its own clients (gateway-thread.ts says why).
    connect = await startConnectGatewayThread(config);
    log.info('spark connect gateway listening', { port: connect.port, url: connect.url });
  } catch (e) {
    // Without a certificate (a deployment that set none) the rest of the API still serves.
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    log.warn('spark connect gateway not started: no TLS certificate (set CONNECT_TLS_CERT and CONNECT_TLS_KEY)', {
      cert: config.CONNECT_TLS_CERT,
    });
  }

  const shutdown = async () => {
    log.info('shutting down');
    await connect?.close();
    await livy.close();
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
