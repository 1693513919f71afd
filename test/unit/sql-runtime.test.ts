// The running engines one API process remembers (api/sql/execute/runtime.ts): a RUNNING record is trusted for
// a short while so a statement costs no database read, but an engine this process stops is forgotten at once.
// (CI, 2026-11-27: a statement sent right after DELETE /sql/engine/{id} went to the stopped engine's cached
// record, the engine's workflow already completed, and the call failed instead of starting a new engine.)
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { createSqlRuntime } from '../../api/sql/execute/runtime';
import type { Config } from '../../lib/config';
import type { Store } from '../../lib/mongo';
import { SqlEngineState, type SqlEngineRecord } from '../../domain/sql-engine';

const config = { SQL_SESSIONS_PER_ENGINE: 2, SQL_ENGINE_IDLE_MS: 60_000 } as Config;
const record = (clusterId: string, type: SqlEngineRecord['type'], port: number): SqlEngineRecord => ({
  id: `${type === 'TRINO' ? 'trino' : 'sparksql'}-${clusterId}`,
  clusterId,
  clusterName: clusterId,
  type,
  state: SqlEngineState.RUNNING,
  endpoint: { host: '127.0.0.1', port },
  generation: 1,
  createdTime: Date.now(),
});

describe('SQL runtime: the engines one API process remembers', () => {
  it('forgets an engine stopped through this process at once, and only that one', async () => {
    const rt = createSqlRuntime(config, {} as Client, {} as Store);
    const a = record('c1', 'SPARK_SQL', 10001);
    const b = record('c1', 'TRINO', 10002);
    const c = record('c2', 'SPARK_SQL', 10003);
    for (const r of [a, b, c]) rt.remember(r);
    expect(rt.cached('c1', 'SPARK_SQL')).toBe(a);

    rt.stopped('c1', 'SPARK_SQL');
    expect(rt.cached('c1', 'SPARK_SQL')).toBeUndefined();
    expect(rt.cached('c1', 'TRINO')).toBe(b);
    expect(rt.cached('c2', 'SPARK_SQL')).toBe(c);
    rt.stopped('c3', 'TRINO'); // an engine it never used: nothing to forget
    expect(rt.cached('c2', 'SPARK_SQL')).toBe(c);
    await rt.close();
  });
});
