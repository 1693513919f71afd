// probeEngine against stand-ins on loopback: a bare TCP listener (SPARK_SQL) and a fake /v1/info (TRINO).
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeEngine } from '../../activities/adapters/engine-probe';
import type { EngineEndpoint } from '../../domain/sql-engine';

const listen = async (server: net.Server): Promise<EngineEndpoint> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { host: '127.0.0.1', port: (server.address() as net.AddressInfo).port };
};
const close = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A port nothing listens on: one that was free a moment ago. */
async function closedPort(): Promise<EngineEndpoint> {
  const s = net.createServer();
  const e = await listen(s);
  await close(s);
  return e;
}

describe('probeEngine', () => {
  let info: { starting: boolean } | 'hang' | 'broken' = { starting: true };
  /** What a query answers: Trino refuses scans until the coordinator has announced itself as a worker node. */
  let scans = true;
  const trino = http.createServer((req, res) => {
    if (req.url === '/v1/statement' && req.method === 'POST') {
      req.resume();
      const error = { message: 'No nodes available to run query', errorName: 'NO_NODES_AVAILABLE' };
      const body = scans
        ? { id: 'q1', columns: [{ name: '_col0', type: 'bigint' }], data: [[5]], stats: { state: 'FINISHED' } }
        : { id: 'q1', stats: { state: 'FAILED' }, error };
      return res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    }
    if (req.url !== '/v1/info' || info === 'hang') return; // never answers
    if (info === 'broken') return res.writeHead(500).end('oops');
    res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ nodeVersion: { version: '368' }, ...info }));
  });
  const tcp = net.createServer((socket) => socket.end());
  let trinoAt: EngineEndpoint;
  let tcpAt: EngineEndpoint;

  beforeAll(async () => {
    [trinoAt, tcpAt] = await Promise.all([listen(trino), listen(tcp)]);
  });
  afterAll(async () => {
    trino.closeAllConnections();
    await Promise.all([close(trino), close(tcp)]);
  });

  it('SPARK_SQL: true once the port accepts a connection, false where nothing listens', async () => {
    expect(await probeEngine('SPARK_SQL', tcpAt, 1_000)).toBe(true);
    expect(await probeEngine('SPARK_SQL', await closedPort(), 1_000)).toBe(false);
  });

  it('TRINO: true only when /v1/info says it is no longer starting and a tpch scan finishes', async () => {
    info = { starting: true };
    expect(await probeEngine('TRINO', trinoAt, 1_000)).toBe(false);
    info = { starting: false };
    scans = false;
    expect(await probeEngine('TRINO', trinoAt, 1_000)).toBe(false);
    scans = true;
    expect(await probeEngine('TRINO', trinoAt, 1_000)).toBe(true);
    info = 'broken';
    expect(await probeEngine('TRINO', trinoAt, 1_000)).toBe(false);
    expect(await probeEngine('TRINO', await closedPort(), 1_000)).toBe(false);
  });

  it('false, not an error, when the engine does not answer within the time given', async () => {
    info = 'hang';
    const t0 = Date.now();
    expect(await probeEngine('TRINO', trinoAt, 300)).toBe(false);
    expect(Date.now() - t0).toBeLessThan(2_000);
  });
});
