// 4.26 Execute an SQL statement: parse, run on the cluster's engine, answer the typed result, streamed as the
// rows arrive when it is large (result-body.ts).
import type { Context } from 'koa';
import { z } from 'zod';
import { SqlStatementCreation, SqlStatementResult } from '../../../domain/sql';
import type { ApiDeps } from '../../deps';
import { logger } from '../../../lib/log';
import { route } from '../../routing';
import { ResultBody, type ResultType } from './result-body';
import type { SqlRuntime } from './runtime';
import { executeStatement } from './service';

const log = logger('sql');

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

/** Ilum's JSON object, unless the client prefers JSON lines (`; charset=utf-8` or not); an Accept of neither: the object. */
function resultType(ctx: Context): ResultType {
  const t = ctx.accepts('application/json', 'application/x-ndjson', 'application/x-ndjson; charset=utf-8');
  return typeof t === 'string' && t.startsWith('application/x-ndjson') ? 'application/x-ndjson' : 'application/json';
}

/**
 * Runs the statement and answers it: whole (errors before the first byte as usual: 4xx {message}), or
 * streamed, ended when the statement FINISHED and cut otherwise.
 */
async function answer(deps: ApiDeps & { sql: SqlRuntime }, body: z.infer<typeof ExecuteBody>, ctx: Context) {
  // The body is written here, not by Koa after every middleware has returned: the client has its answer
  // without waiting for the audit record (written right after, with the status set here).
  const type = resultType(ctx);
  const start = () => {
    ctx.status = 200;
    ctx.type = type;
    ctx.respond = false;
  };
  const out = new ResultBody(ctx.res, start, Date.now(), type);
  let result: Awaited<ReturnType<typeof executeStatement>>;
  try {
    result = await executeStatement(deps, body, abortOnDisconnect(ctx), out);
  } catch (e) {
    if (!out.streaming) throw e;
    log.warn('SQL result cut short: the statement failed after its rows had started', { err: String(e) });
    return out.fail();
  }
  if (!out.streaming) {
    const whole = out.whole(result);
    start();
    ctx.length = whole.length;
    ctx.res.end(whole);
  } else if (result.info.state === 'FINISHED') await out.finish(result.info, result.logs);
  else {
    // CANCELED: the client went away (nothing to tell); TIMEDOUT or ERROR: the client sees a cut transfer.
    (result.info.state === 'CANCELED' ? log.info : log.warn)('SQL result cut short after its rows had started', {
      state: result.info.state,
      rows: out.count,
    });
    out.fail();
  }
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
    alternatives: {
      'application/x-ndjson':
        'The same result as JSON lines, asked for with Accept: application/x-ndjson: {"columns":[…]}, then {"rows":[…]} lines of up to 1,000 rows, then {"info":{…},"logs":[…]} last',
    },
    errors: [400, 402, 404, 409],
    handler: ({ body, ctx }) => answer(deps, body, ctx),
  }),
];
