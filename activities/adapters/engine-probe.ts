// Whether an SQL engine answers at its endpoint yet: an adapter's RUNNING only says the process or pod
// exists, and an engine takes seconds more to listen. Used by the engine workflow's readiness activity.
import type { EngineEndpoint, SqlEngine } from '../../domain/sql-engine';
import { protocols } from '../../lib/sql';
import { tcpAccepts } from '../../lib/tcp';

export { tcpAccepts };

/**
 * SPARK_SQL: a TCP connection to the Thrift port succeeds (HiveServer2 opens it once Spark is up);
 * TRINO: GET /v1/info answers with `"starting": false` (Trino listens before it accepts queries), and a
 * query on the tpch catalog finishes (until the coordinator has announced itself as a worker node, queries
 * that scan a table fail with "No nodes available to run query").
 * False, never an error, for anything else, including no answer within timeoutMs.
 */
export function probeEngine(type: SqlEngine, endpoint: EngineEndpoint, timeoutMs: number): Promise<boolean> {
  return type === 'TRINO' ? trinoReady(endpoint, timeoutMs) : tcpAccepts(endpoint, timeoutMs);
}

export async function trinoReady({ host, port }: EngineEndpoint, timeoutMs: number): Promise<boolean> {
  const hostPart = host.includes(':') ? `[${host}]` : host;
  try {
    const res = await fetch(`http://${hostPart}:${port}/v1/info`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return false;
    const info = (await res.json()) as { starting?: unknown };
    if (info.starting !== false) return false;
  } catch {
    return false;
  }
  return trinoScans({ host, port }, timeoutMs);
}

async function trinoScans(endpoint: EngineEndpoint, timeoutMs: number): Promise<boolean> {
  const conn = await protocols.TRINO.connect(endpoint, { user: 'readiness-probe', connectTimeoutMs: timeoutMs }).catch(
    () => undefined,
  );
  if (!conn) return false;
  try {
    const o = await conn.run('select count(*) from tpch.tiny.region', { maxRows: 1, timeoutMs });
    return o.info.state === 'FINISHED';
  } catch {
    return false;
  } finally {
    await conn.close().catch(() => undefined);
  }
}
