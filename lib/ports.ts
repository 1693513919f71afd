// Free ports for servers started in other processes (SQL engines, Spark UIs, the test stack's servers), which
// bind them seconds later (a JVM's start). A port from listen(0) comes from the kernel's ephemeral range, where
// every outgoing connection's local port comes from too: in those seconds any process's new connection may take
// it, and the server then cannot listen. Ports are therefore drawn below that range, where only explicit binds
// land, and checked free; listen(0) is the fallback when no such range is known or none is free.
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** The lowest port drawn: above the fixed ports of common services and of this one's defaults. */
export const FLOOR = 20_000;
/** Fixed ports in the drawn range that a dev stack may use (MONGO_PORT's default). */
const RESERVED = new Set([27017]);
const DRAWS = 20;

/** The first port of the kernel's ephemeral range (Linux), or undefined. */
export function ephemeralLow(): number | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : undefined;
  } catch {
    return undefined;
  }
}
let ceiling: number | undefined | null = null;

/** The port listened on (0: the kernel's choice), or undefined if it cannot be. */
function listenable(port: number, host: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(undefined));
    s.listen(port, host, () => {
      const { port: got } = s.address() as net.AddressInfo;
      s.close(() => resolve(got));
    });
  });
}

/** A port no one listens on now, outside the ephemeral range when there is room. Another process may still take it. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  if (ceiling === null) ceiling = ephemeralLow();
  const span = (ceiling ?? 0) - FLOOR;
  for (let i = 0; span >= 1000 && i < DRAWS; i++) {
    const port = FLOOR + Math.floor(Math.random() * span);
    if (RESERVED.has(port)) continue;
    if (await listenable(port, host)) return port;
  }
  const port = await listenable(0, host);
  if (!port) throw new Error(`no port to listen on at ${host}`);
  return port;
}

/** Whether a server's start failed because its port was taken (mongo-java-server's and Go's wording). */
export const portTaken = (err: unknown): boolean =>
  /address already in use|cannot listen on/i.test(err instanceof Error ? err.message : String(err));
