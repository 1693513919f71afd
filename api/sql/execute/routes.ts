// 4.26 Execute an SQL statement: parse, run on the cluster's engine, answer the typed result.
import type { Context } from 'koa';
import { z } from 'zod';
import { SqlStatementCreation, SqlStatementResult } from '../../../domain/sql';
import type { ApiDeps } from '../../deps';
import { route } from '../../routing';
import type { SqlRuntime } from './runtime';
import { executeStatement } from './service';

/** Ilum's body, plus an optional per-request timeout (bounded by SQL_STATEMENT_TIMEOUT_MS). */
const ExecuteBody = SqlStatementCreation.extend({ timeoutMs: z.number().int().min(100).optional() });

/** Aborted when the client goes away before the answer: its statement is then cancelled in the engine. */
function abortOnDisconnect(ctx: Context): AbortSignal {
  const ac = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) ac.abort();
  });
  return ac.signal;
}

export const sqlExecuteRoutes = (deps: ApiDeps & { sql: SqlRuntime }) => [
  route({
    method: 'post',
    path: '/sql/execute',
    role: 'operator',
    tag: 'sql',
    summary:
      "Execute an SQL statement (4.26) on the cluster's engine (started when none runs); a failing statement answers 200 with info.state ERROR",
    body: { kind: 'json', schema: ExecuteBody },
    response: SqlStatementResult,
    errors: [400, 402, 404, 409],
    handler: ({ body, ctx }) => executeStatement(deps, body, abortOnDisconnect(ctx)),
  }),
];
