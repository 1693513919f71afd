// Whether something listens at an address: a TCP connection succeeds within timeoutMs. False, never an error, for
// anything else. Its own module so that what only needs this (the Spark Connect gateway) loads no SQL client.
import net from 'node:net';

export function tcpAccepts({ host, port }: { host: string; port: number }, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
