// The API as a running server: the Koa app and the Socket.IO streams on one HTTP server. Used by
// api/main.ts, and by tests and benchmarks that want the real API on a port.
import type { Client } from '@temporalio/client';
import { createAdapterRegistry, type AdapterLookup } from '../activities/adapters/registry';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../lib/config';
import { startTracing } from '../lib/tracing';
import type { Store } from '../lib/mongo';
import { createApp } from './app';
import { socketAuth } from './auth/authenticate';
import { checkAuthSetup } from './auth/startup';
import type { ApiDeps } from './deps';
import { createLaunchAtSubmit } from './jobs/launch-at-submit';
import { API_PREFIX } from './routing';
import { createSqlRuntime } from './sql/execute/runtime';
import { socketAllowRequest, socketCors } from './security/host-origin';
import { createFeeds } from './streams/feed';
import { attachSocketIo } from './streams/socketio';

export interface StartApiOptions {
  config: Config;
  store: Store;
  temporal: Client;
  /** Default config.API_PORT; 0 picks a free port. */
  port?: number;
  /** Default config.API_HOST. */
  host?: string;
  /** The cluster adapters of the launches at submit (default: the same registry the worker builds). */
  adapterFor?: AdapterLookup;
}

export interface RunningApi {
  /** What the routes were given (the change feeds included). */
  deps: ApiDeps;
  server: http.Server;
  /** Base URL of the API, e.g. http://127.0.0.1:9888/api/v1 */
  url: string;
  /** Closes the streams, the open connections and the server; the store and Temporal client stay open. */
  close(): Promise<void>;
}

const urlHost = (host: string) =>
  host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

export async function startApi(opts: StartApiOptions): Promise<RunningApi> {
  const { config, store, temporal } = opts;
  const host = opts.host ?? config.API_HOST;
  // Refuses a public address without authentication, before anything is started.
  await checkAuthSetup(config, store, host);
  startTracing(config, 'api');
  const feeds = createFeeds(store, config);
  const launches = createLaunchAtSubmit(config, store, opts.adapterFor ?? createAdapterRegistry(config, store));
  const deps: ApiDeps = { config, store, temporal, feeds, sql: createSqlRuntime(config, temporal, store), launches };
  const server = http.createServer(createApp(deps).callback());
  const io = attachSocketIo(server, feeds, socketAuth(deps), {
    allowRequest: socketAllowRequest(config, host),
    cors: socketCors(config),
  });
  server.listen(opts.port ?? config.API_PORT, host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([e]) => Promise.reject(e))]);
  const url = `http://${urlHost(host)}:${(server.address() as AddressInfo).port}${API_PREFIX}`;
  deps.apiUrl = url;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const closed = once(server, 'close');
      // Socket.IO disconnects its clients and stops the HTTP server from accepting connections.
      await io.close();
      // SSE responses never end by themselves.
      server.closeAllConnections();
      await closed;
      await Promise.all([feeds.close(), deps.sql?.close(), deps.audit?.flush(), launches.drain(5_000)]);
    })());
  return { deps, server, url, close };
}
