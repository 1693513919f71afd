// The least a TLS-terminating HTTP/2 proxy in Node does, for bench/connect.ts: TLS in, each stream forwarded as
// is over h2c to one Spark Connect server with its secret header added, no authentication, no routing, no
// bookkeeping. Run as its own process (plain JS, a small heap), with the gateway's certificate, flow-control
// windows and young generation, so that "gateway against this" is what the gateway's own code costs and "this
// against direct" is what TLS and one proxy hop cost on this machine.
//   node --max-semi-space-size=1 bench/tls-floor-proxy.mjs   (env: UPSTREAM host:port, SECRET_HEADER, SECRET,
//   CERT, KEY; prints {"port": N} once it listens)
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import process from 'node:process';

const WINDOW = 16 * 2 ** 20;
const SETTINGS = { initialWindowSize: WINDOW, maxFrameSize: 2 ** 20 };
const [host, port] = process.env.UPSTREAM.split(':');
const HOP = new Set([':authority', ':scheme', 'host', 'connection', 'authorization']);
let upstream;
const up = () => {
  if (!upstream || upstream.closed || upstream.destroyed) {
    upstream = http2.connect(`http://${host}:${port}`, {
      settings: SETTINGS,
      createConnection: () => net.connect({ host, port: Number(port), noDelay: true }),
    });
    upstream.on('connect', () => upstream.setLocalWindowSize(WINDOW));
    upstream.on('error', () => undefined);
  }
  return upstream;
};

const server = http2.createSecureServer({
  cert: readFileSync(process.env.CERT),
  key: readFileSync(process.env.KEY),
  settings: SETTINGS,
});
server.on('secureConnection', (s) => s.setNoDelay(true));
server.on('session', (s) => {
  s.setLocalWindowSize(WINDOW);
  s.on('error', () => undefined);
});
server.on('stream', (stream, headers) => {
  stream.on('error', () => undefined);
  const out = { [process.env.SECRET_HEADER]: process.env.SECRET };
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
  const req = up().request(out);
  let trailers;
  req.on('response', (h) => {
    if (req.endAfterHeaders || h['grpc-status'] !== undefined) return stream.respond(h, { endStream: true });
    stream.respond(h, { waitForTrailers: true });
    req.pipe(stream);
  });
  req.on('trailers', (t) => (trailers = t));
  req.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  stream.on('wantTrailers', () => stream.sendTrailers(trailers ?? { 'grpc-status': '13' }));
  stream.on('close', () => req.closed || req.close(http2.constants.NGHTTP2_CANCEL));
  stream.pipe(req);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
