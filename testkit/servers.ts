// The two servers every integration test, end-to-end test and benchmark needs: a Temporal dev server and
// mongo-java-server, as child processes on free ports with their data and logs under one folder.
import net from 'node:net';
import path from 'node:path';
import { ROOT } from '../lib/config';
import { freePort as anyFreePort, portTaken } from '../lib/ports';
import { startServices, type Services } from '../scripts/services';

export { killDrivers } from '../scripts/services';

/** A free port on 127.0.0.1, outside the kernel's ephemeral range when it can (lib/ports.ts). */
export const freePort = () => anyFreePort('127.0.0.1');

/**
 * Keeps ports from being handed to anyone else while their servers are down (a restart on the same
 * addresses): listeners on each, closed by the function returned, just before the servers start again.
 * A port some socket already took is skipped; the restart then says what holds it.
 */
export async function holdPorts(ports: number[]): Promise<() => Promise<void>> {
  const held: net.Server[] = [];
  for (const port of ports) {
    const s = net.createServer();
    const ok = await new Promise<boolean>((resolve) => {
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) held.push(s);
  }
  return async () => {
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  };
}

export interface ServersOptions {
  /** Data in `<dir>/data`, logs in `<dir>/logs`. */
  dir: string;
  /** Keep data in files (tests that restart a server) or in memory (benchmarks). */
  persistent: boolean;
  /** Where the servers are installed (scripts/setup.sh); default STACK_DIR or `.stack`. */
  stackDir?: string;
  /** More Temporal dynamic configuration. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Fixed ports, e.g. to restart the servers on the same addresses; free ports otherwise. */
  ports?: { temporal: number; temporalUi: number; mongo: number };
}

export interface Servers extends Services {
  ports: { temporal: number; temporalUi: number; mongo: number };
}

/** Starts on free ports drawn again (up to three times) when one was taken before its server could listen. */
export async function startServers(o: ServersOptions): Promise<Servers> {
  for (let attempt = 1; ; attempt++) {
    const ports = o.ports ?? { temporal: await freePort(), temporalUi: await freePort(), mongo: await freePort() };
    try {
      const services = await startServices({
        stackDir: o.stackDir ?? process.env.STACK_DIR ?? path.join(ROOT, '.stack'),
        dataDir: path.join(o.dir, 'data'),
        logDir: path.join(o.dir, 'logs'),
        temporalPort: ports.temporal,
        temporalUiPort: ports.temporalUi,
        mongoPort: ports.mongo,
        persistent: o.persistent,
        headless: true,
        dynamicConfig: o.dynamicConfig,
      });
      return { ...services, ports };
    } catch (e) {
      if (o.ports || attempt >= 3 || !portTaken(e)) throw e;
      console.warn(
        `test servers: a port was taken before its server listened; again on other ports (${String(e).split('\n')[0]})`,
      );
    }
  }
}
