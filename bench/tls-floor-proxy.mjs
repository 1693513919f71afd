// The least a TLS-terminating proxy in Node does, for bench/connect.ts: TLS in (ALPN h2), the bytes piped both
// ways to one Spark Connect server over TCP, nothing read, no authentication, no routing; the client sends the
// server's secret itself. Run as its own process (plain JS, a small heap) with the gateway's certificate, so
// that "gateway against this" is what the gateway's own code costs and "this against direct" is what TLS and
// one hop cost on this machine, whatever the proxy's code.
//   node --max-semi-space-size=1 bench/tls-floor-proxy.mjs   (env: UPSTREAM host:port, CERT, KEY; prints
//   {"port": N} once it listens)
import { readFileSync } from 'node:fs';
import net from 'node:net';
import process from 'node:process';
import tls from 'node:tls';

const [host, port] = process.env.UPSTREAM.split(':');
const server = tls.createServer(
  { cert: readFileSync(process.env.CERT), key: readFileSync(process.env.KEY), ALPNProtocols: ['h2'] },
  (client) => {
    client.setNoDelay(true);
    const up = net.connect({ host, port: Number(port), noDelay: true });
    client.pipe(up).pipe(client);
    client.on('error', () => up.destroy());
    up.on('error', () => client.destroy());
  },
);
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
