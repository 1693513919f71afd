// End-to-end harness: the real API (app.callback(), no port) and a real worker in-process, against the
// Temporal and MongoDB servers of test/global-setup.ts. Each file gets its own database and task queue.
import { DefaultLogger, Runtime, type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { inject } from 'vitest';
import { createApp, type ApiDeps } from '../api/app';
import { createFeeds } from '../api/streams/feed';
import { attachSocketIo } from '../api/streams/socketio';
import { loadConfig, type Config } from '../lib/config';
import { connectStore, prepareStore, type Store } from '../lib/mongo';
import { connectTemporal } from '../lib/temporal';
import { createWorker } from '../worker/worker';
import { form, request, type Reply } from './http';

export interface Harness {
  config: Config;
  store: Store;
  deps: ApiDeps;
  /** Base URL of the API, e.g. http://127.0.0.1:12345/api/v1 */
  url: string;
  server: http.Server;
  worker?: Worker;
  stop(): Promise<void>;
}

/** The SDK's worker-state lines would drown test output; one Runtime per test file process. */
function quietTemporal(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // already installed in this process
  }
}

export async function startHarness(opts: { worker?: boolean; env?: Record<string, string> } = {}): Promise<Harness> {
  quietTemporal();
  const id = randomUUID().slice(0, 8);
  const dir = path.join(inject('testDir'), id);
  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    MONGO_URL: inject('mongoUrl'),
    MONGO_DB: `test_${id}`,
    TASK_QUEUE: `test-${id}`,
    ARTIFACT_DIR: path.join(dir, 'artifacts'),
    DRIVER_DIR: path.join(dir, 'drivers'),
    WATCH_INTERVAL_MS: '200',
    LOG_LEVEL: 'warn',
    ...opts.env,
  });
  const store = await connectStore(config);
  await prepareStore(store);
  const temporal = await connectTemporal(config);
  const deps: ApiDeps = { config, store, temporal, feeds: createFeeds(store) };
  const app = createApp(deps);
  const server = http.createServer(app.callback());
  const io = attachSocketIo(server, deps.feeds!);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;

  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  if (opts.worker !== false) {
    const w = await createWorker(config, store, { bundle: { code: readFileSync(inject('bundlePath'), 'utf8') } });
    worker = w.worker;
    running = w.run();
  }
  return {
    config,
    store,
    deps,
    url,
    server,
    worker,
    async stop() {
      if (worker && worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await io.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await deps.feeds?.close();
      await temporal.connection.close();
      await store.close();
    },
  };
}

/** fetch + JSON against the harness's API; returns status and parsed body. */
export const call = (h: Pick<Harness, 'url'>, method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
  request(h.url, method, p, body, headers);

export { form };

export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 60_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
