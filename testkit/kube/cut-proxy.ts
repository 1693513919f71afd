// A TCP pass-through in front of the real API server that a test can cut and mend: cut, it closes every
// connection and refuses new ones (the API server unreachable at the same address, as a network partition
// looks to the service); mended, it forwards again. TLS goes through untouched.
import net from 'node:net';

export interface CutProxy {
  /** https://127.0.0.1:<port>: the API server's address through the proxy. */
  url: string;
  cut(): void;
  mend(): void;
  stop(): Promise<void>;
}

/** `listenPort`: where the proxy listens (default a free port), e.g. an address a cluster document already names. */
export async function startCutProxy(target: string, listenPort = 0): Promise<CutProxy> {
  const { hostname, port } = new URL(target);
  let open = true;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(listenPort, '127.0.0.1', r));
  const { port: own } = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${own}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    mend() {
      open = true;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
