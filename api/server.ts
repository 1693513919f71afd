// Starts the API: the Koa app on an HTTP server with the Socket.IO streams. api/main.ts runs it on
// API_PORT; tests and benchmarks run it on a free port beside an in-process or separate worker.
import type { Client } from '@temporalio/client';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../lib/config';
import type { Store } from '../lib/mongo';
import { createApp } from './app';
import { API_PREFIX } from './routing';
import { attachSocketIo, createFeeds } from './streams';

export interface StartApiOptions {
  config: Config;
  store: Store;
  temporal: Client;
  /** Default config.API_PORT; 0 picks a free port. */
  port?: number;
  /** Default config.API_HOST. */
  host?: string;
}

export interface RunningApi {
  server: http.Server;
  /** Base URL of the API, e.g. http://127.0.0.1:9888/api/v1 (a wildcard host is reached on 127.0.0.1). */
  url: string;
  /** Closes what startApi opened (streams, connections, the server, the change feeds); store and temporal stay open. */
  close(): Promise<void>;
}

export async function startApi({ config, store, temporal, port = config.API_PORT, host = config.API_HOST }: StartApiOptions): Promise<RunningApi> {
  const feeds = createFeeds(store);
  const app = createApp({ config, store, temporal, feeds });
  const server = http.createServer(app.callback());
  const io = attachSocketIo(server, feeds);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    server,
    url: `http://${reachable}:${bound}${API_PREFIX}`,
    async close() {
      // Socket.IO first: it closes its clients and the HTTP server; open SSE responses would keep it waiting.
      await io.close();
      server.closeAllConnections();
      if (server.listening) await new Promise((r) => server.close(r));
      await feeds.close();
    },
  };
}
