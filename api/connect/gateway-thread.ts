// The Spark Connect gateway on a thread of its own (api/main.ts starts it so), with its own MongoDB and Temporal
// clients, so that its byte path neither shares the API's heap nor its event loop.
// Why: a large collect streams Arrow batches through the gateway at hundreds of MB/s. In the API's isolate (a heap
// of ~110 MB: the Temporal client, the feeds, the routes) the buffers of that stream made V8 run a full mark-compact
// of the whole heap about twice a second (29 for 1 GB, `--trace-gc`), and garbage collection was most of the
// gateway's 7.6 ms of CPU per MB (bench/connect.ts, perf). On a small isolate of its own each collection is cheap,
// and it runs beside the API's thread instead of between its requests.
// The gateway keeps no state the API reads in memory: sessions and servers are records in the store (sessions.ts),
// so the API's routes and any number of gateways already meet there.
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Config } from '../../lib/config';
import { logger, logSettings, setLogFormat, setLogLevel } from '../../lib/log';
import { connectStore } from '../../lib/mongo';
import { connectTemporal } from '../../lib/temporal';
import { startConnectGateway, type ConnectGatewayOptions } from './gateway';

const log = logger('connect');
const ROLE = 'spark-connect-gateway';
/** A gateway thread that died is started again after this long (its port is free again by then), until it runs. */
const RESTART_MS = 1_000;
/**
 * The thread's young generation, in MB (V8's default is ~3 x 16 MB). Each chunk the gateway forwards is a Buffer
 * over memory outside the heap; V8 frees it when a collection finds the Buffer dead, and a young generation that
 * fills slowly (the byte path allocates little on the heap) let that memory pile up until V8 ran a full
 * mark-compact of the whole isolate for it, about every 16 MB forwarded. A small young generation frees those
 * Buffers in cheap scavenges instead: a 512 MB collect ran 38 mark-compacts before, 7 to 10 after
 * (bench/connect.ts prints the gateway's CPU per MB).
 */
const YOUNG_GENERATION_MB = 3;

type Options = Pick<ConnectGatewayOptions, 'port' | 'host'>;
interface ThreadData {
  role: typeof ROLE;
  config: Config;
  opts: Options;
  log: ReturnType<typeof logSettings>;
}
type FromThread = { listening: { port: number; url: string } } | { failed: { message: string; code?: string } };

export interface GatewayThread {
  port: number;
  /** e.g. sc://127.0.0.1:15002 */
  url: string;
  close(): Promise<void>;
}

/**
 * The thread, running this module: itself from the sources (through tsx's loader), dist/connect-gateway.js from
 * the build, where this module is bundled into dist/api.js (scripts/build.mjs builds both entries).
 */
function threadOf(workerData: ThreadData): Worker {
  const here = fileURLToPath(import.meta.url);
  const resourceLimits = { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB };
  if (!here.endsWith('.ts'))
    return new Worker(path.join(path.dirname(here), 'connect-gateway.js'), { workerData, resourceLimits });
  // From the sources the thread needs tsx's loader too: a worker does not inherit the one tsx gave this thread.
  const boot = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(pathToFileURL(here).href)}); })`;
  return new Worker(boot, { eval: true, workerData, resourceLimits });
}

/** Starts the gateway on its thread; resolves once it listens, rejects as startConnectGateway would (e.g. ENOENT). */
export async function startConnectGatewayThread(config: Config, opts: Options = {}): Promise<GatewayThread> {
  let closing = false;
  let worker: Worker;
  let running = false;
  let port = opts.port ?? config.CONNECT_PORT;
  const start = () =>
    new Promise<{ port: number; url: string }>((resolve, reject) => {
      let listening = false;
      worker = threadOf({ role: ROLE, config, opts: { ...opts, port }, log: logSettings() });
      // From here until it exits, a close() reaches it: its word waits in the port until the thread listens.
      running = true;
      worker.on('message', (m: FromThread) => {
        if ('listening' in m) {
          listening = true;
          resolve(m.listening);
        } else if ('failed' in m) reject(Object.assign(new Error(m.failed.message), { code: m.failed.code }));
      });
      worker.on('error', (e) => (listening ? log.error('Spark Connect gateway thread failed', { err: e }) : reject(e)));
      worker.once('exit', (code) => {
        running = false;
        if (!listening) return reject(new Error(`the Spark Connect gateway thread exited (${code}) before listening`));
        if (closing) return;
        // Died while serving: clients see their calls fail (UNAVAILABLE, which they retry) and reconnect.
        log.error('Spark Connect gateway thread exited; starting it again', { code });
        setTimeout(restart, RESTART_MS);
      });
    });
  // Again and again until it runs, unless the API closed it meanwhile.
  const restart = (): void => {
    if (closing) return;
    start().catch((e: unknown) => {
      log.error('Spark Connect gateway thread did not start again; trying again', { err: e });
      setTimeout(restart, RESTART_MS);
    });
  };
  const first = await start();
  port = first.port;
  return {
    port: first.port,
    url: first.url,
    async close() {
      closing = true;
      if (!running) return;
      const exited = once(worker, 'exit');
      worker.postMessage('close');
      await exited;
    },
  };
}

/** The thread's side: its own clients, the gateway, and a clean close on the API's word. */
async function runThread(): Promise<void> {
  const { config, opts, log: logAs } = workerData as ThreadData;
  setLogLevel(logAs.level);
  setLogFormat(logAs.format);
  const store = await connectStore(config);
  const temporal = await connectTemporal(config).catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  const closeClients = () => Promise.all([store.close(), temporal.connection.close()]);
  const gw = await startConnectGateway({ config, store, temporal }, opts).catch(async (e: unknown) => {
    await closeClients();
    throw e;
  });
  parentPort!.postMessage({ listening: { port: gw.port, url: gw.url } } satisfies FromThread);
  parentPort!.on('message', (m) => {
    if (m !== 'close') return;
    void gw
      .close()
      .then(closeClients)
      .finally(() => process.exit(0));
  });
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) {
  runThread().catch((e: unknown) => {
    // Told to the API's thread, which rejects its start with it (a missing certificate keeps its code, ENOENT).
    const err = e as NodeJS.ErrnoException;
    parentPort!.postMessage({ failed: { message: err.message, code: err.code } } satisfies FromThread);
    process.exit(1);
  });
}
