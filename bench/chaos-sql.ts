// The SQL part of the chaos run's mixed load: statements on the default cluster's SPARK_SQL engine (a
// Spark Thrift Server, started by the first one), one a second for the whole run, through every fault.
// Each asks for a number it must get back. At the end every statement has an answer: the right value, or a
// failure that says why (a statement in flight when a process dies may fail, clearly); a wrong value or
// an answer without a message counts as lost. The engine is a driver: no crash of another process may
// stop it, so after the faults it still answers.
import type { Reply } from '../testkit/http';
import { sleep } from '../testkit/wait';

export interface StatementCheck {
  sent: number;
  ok: number;
  failedClearly: number;
  lost: number;
  /** Sent, but the connection was cut before any answer (its API died); not sent again. */
  cut: number;
  errors: string[];
}

type Call = (method: string, p: string, body?: unknown) => Promise<Reply>;

export interface SqlLoad {
  stop(): Promise<StatementCheck>;
}

const messageOf = (r: Reply): string => {
  const b = r.body as { message?: string; info?: { exception?: string; state?: string } } | undefined;
  return String(b?.message ?? b?.info?.exception ?? '').trim();
};

export async function startSqlLoad(call: Call, everyMs: number, log: (line: string) => void): Promise<SqlLoad> {
  const first = await call('POST', '/sql/execute', { statement: 'select 0' });
  if (first.status !== 200 || first.body?.info?.state !== 'FINISHED')
    throw new Error(`first SQL statement: HTTP ${first.status} ${JSON.stringify(first.body)}`);
  log(`SQL engine of the default cluster answers: a statement every ${everyMs} ms from now on`);
  const check: StatementCheck = { sent: 0, ok: 0, failedClearly: 0, lost: 0, cut: 0, errors: [] };
  const note = (m: string) => {
    if (!check.errors.includes(m) && check.errors.length < 5) check.errors.push(m);
  };
  let running = true;
  const loop = (async () => {
    for (let n = 1; running; n++) {
      check.sent++;
      const r = await call('POST', '/sql/execute', { statement: `select ${n} as n` }).catch(() => undefined);
      if (!r) {
        check.cut++;
        await sleep(everyMs);
        continue;
      }
      const state = r.body?.info?.state;
      const value = r.body?.rows?.[0]?.[0];
      if (r.status === 200 && state === 'FINISHED' && Number(value) === n) check.ok++;
      else if (r.status < 500 && (state !== 'FINISHED' || r.status !== 200) && messageOf(r)) {
        check.failedClearly++;
        note(`${r.status} ${state ?? ''} ${messageOf(r).slice(0, 160)}`);
      } else {
        check.lost++;
        note(`${r.status} ${state ?? ''} value ${JSON.stringify(value)} for ${n}`);
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      // The engine outlived every fault: it still answers.
      const last = await call('POST', '/sql/execute', { statement: 'select 42' });
      if (Number(last.body?.rows?.[0]?.[0]) !== 42) {
        check.lost++;
        note(`after the faults: ${last.status} ${JSON.stringify(last.body)}`);
      }
      return check;
    },
  };
}
