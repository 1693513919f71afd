// Whether an SQL engine answers at its endpoint yet: an adapter's RUNNING only says the process or pod
// exists, and an engine takes seconds more to listen. Used by the engine workflow's readiness activity.
import net from 'node:net';
import type { EngineEndpoint, SqlEngine } from '../../domain/sql-engine';

/**
 * SPARK_SQL: a TCP connection to the Thrift port succeeds (HiveServer2 opens it once Spark is up);
 * TRINO: GET /v1/info answers with `"starting": false` (Trino listens before it accepts queries).
 * False, never an error, for anything else, including no answer within timeoutMs.
 */
export function probeEngine(type: SqlEngine, endpoint: EngineEndpoint, timeoutMs: number): Promise<boolean> {
  return type === 'TRINO' ? trinoReady(endpoint, timeoutMs) : tcpAccepts(endpoint, timeoutMs);
}

export function tcpAccepts({ host, port }: EngineEndpoint, timeoutMs: number): Promise<boolean> {
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

export async function trinoReady({ host, port }: EngineEndpoint, timeoutMs: number): Promise<boolean> {
  const hostPart = host.includes(':') ? `[${host}]` : host;
  try {
    const res = await fetch(`http://${hostPart}:${port}/v1/info`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return false;
    const info = (await res.json()) as { starting?: unknown };
    return info.starting === false;
  } catch {
    return false;
  }
}
