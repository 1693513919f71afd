// The Livy-compatible API on its own port (LIVY_PORT, default 8998 as Livy's), beside the main API in
// the same process and with the same clients. Used by api/main.ts and by tests (port 0: a free one).
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { auditTrail } from '../audit/trail';
import { checkAuthSetup } from '../auth/startup';
import type { ApiDeps } from '../deps';
import { createLivyApp, type LivyAppOptions } from './app';

export interface RunningLivy {
  server: http.Server;
  /** e.g. http://127.0.0.1:8998 */
  url: string;
  close(): Promise<void>;
}

export async function startLivy(
  deps: ApiDeps,
  opts: LivyAppOptions & { port?: number; host?: string } = {},
): Promise<RunningLivy> {
  const host = opts.host ?? deps.config.LIVY_HOST;
  // The main API's rules: a public address needs authentication (AUTH_MODE=on), and then every call
  // needs a key or token with the role its route declares (api/livy/app.ts); state changes go to the
  // audit trail.
  await checkAuthSetup(deps.config, deps.store, host);
  const before = opts.before ?? [auditTrail(deps.store, { maxPerMinute: deps.config.AUDIT_MAX_PER_MINUTE })];
  const server = http.createServer(createLivyApp(deps, { ...opts, before }).callback());
  server.listen(opts.port ?? deps.config.LIVY_PORT, host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([e]) => Promise.reject(e))]);
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    const closed = once(server, 'close');
    server.close();
    server.closeAllConnections();
    await closed;
  };
  return { server, url, close };
}
