// Container health check, run by the image's node: `node healthcheck.mjs api|worker`. Exit 0 = healthy.
//   api:    GET /api/v1/health answers 200 (Temporal and MongoDB reachable from the API).
//   worker: the Temporal frontend accepts a TCP connection. The worker serves no HTTP, so this says
//           only that it can reach Temporal; a worker that dies exits and is restarted.
import net from 'node:net';

const TIMEOUT_MS = 3000;
const mode = process.argv[2];

async function api() {
  const port = process.env.API_PORT || '9888';
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (res.status !== 200) throw new Error(`health answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

function worker() {
  const address = process.env.TEMPORAL_ADDRESS || '127.0.0.1:7233';
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(i + 1));
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, timeout: TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => socket.destroy(new Error(`no answer from ${address} within ${TIMEOUT_MS} ms`)));
    socket.once('error', reject);
  });
}

const checks = { api, worker };
if (!checks[mode]) {
  console.error('usage: node healthcheck.mjs api|worker');
  process.exit(2);
}
checks[mode]().then(
  () => process.exit(0),
  (e) => {
    console.error(`unhealthy: ${e.message}`);
    process.exit(1);
  },
);
