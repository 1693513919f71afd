// The group part of the chaos run's mixed load: a PYTHON group of scale 2 receives an asynchronous
// execution every couple of seconds for the whole run, through every fault (with `syncEvery`, every n-th
// is synchronous: POST …/job/execute, its result in the answer and in the group's results). Each execution's job class
// appends the client's id to a marker file, so a run the service did twice shows up there. At the end
// every execution must have a result: its value, or an error with a message (an execution in flight when
// a process dies may fail, clearly); none may be left without one (lost) or run more often than it has
// results (duplicated: a submit the client sent again after losing the answer has two results, which is
// the client's doing, not the service's).
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { form, type Reply } from '../testkit/http';
import { sleep } from '../testkit/wait';

const JOBS_PY = `from ilum.api import IlumJob


class Mark(IlumJob):
    def run(self, spark, config):
        with open(config["file"], "a") as f:
            f.write(config["id"] + "\\n")
        return "ok"
`;

export interface ExecutionCheck {
  submitted: number;
  succeeded: number;
  /** Ended with an error that says why (e.g. no ready instance within EXECUTE_WAIT_MS during an outage). */
  failedClearly: number;
  /** Without a result at the end. */
  lost: number;
  /** Run more often than they have results. */
  duplicated: number;
  /** With more than one result (a client that sends one again after losing the answer makes two). */
  doubleResults: number;
  /** Synchronous ones sent (part of `submitted`). */
  sync: number;
  /**
   * Sent, but the connection was cut before any answer (its API died): the client cannot know whether it
   * was accepted, so none counts as lost; each still ran at most once.
   */
  cut: number;
  errors: string[];
}

interface Result {
  jobInstanceId: string;
  endTime?: number;
  result?: string | null;
  error?: { message: string } | null;
  jobConfig: Record<string, unknown>;
}

type Call = (method: string, p: string, body?: unknown) => Promise<Reply>;

export interface GroupLoad {
  groupId: string;
  /** Stops submitting, waits up to `timeoutMs` for every result, and checks them. */
  stop(timeoutMs: number): Promise<ExecutionCheck>;
}

export interface GroupLoadOptions {
  /** Instances of the group (2). */
  scale?: number;
  /** Every n-th execution is synchronous (none). */
  syncEvery?: number;
}

export async function startGroupLoad(
  call: Call,
  dir: string,
  everyMs: number,
  log: (line: string) => void,
  opts: GroupLoadOptions = {},
): Promise<GroupLoad> {
  const scale = opts.scale ?? 2;
  const created = await call(
    'POST',
    '/group',
    form(
      { name: `chaos-group-${Date.now()}`, language: 'PYTHON', scale: String(scale), driverMemory: '512m' },
      { pyFiles: [{ name: 'jobs.py', content: JOBS_PY }] },
    ),
  );
  if (created.status !== 200) throw new Error(`group: HTTP ${created.status} ${JSON.stringify(created.body)}`);
  const groupId = created.body.groupId as string;
  const deadline = Date.now() + 240_000;
  for (;;) {
    const jobs = ((await call('GET', `/group/${groupId}`)).body.jobs ?? []) as { state: string }[];
    if (jobs.filter((j) => j.state === 'READY').length >= scale) break;
    if (Date.now() > deadline) throw new Error(`group ${groupId}: ${scale} instance(s) not READY within 240 s`);
    await sleep(1000);
  }
  log(`group ${groupId} READY (scale ${scale}): an execution every ${everyMs} ms from now on`);

  const marker = path.join(dir, `executions-${groupId}.txt`);
  const sent: string[] = [];
  const cut = new Set<string>();
  /** Synchronous executions whose answer was not their result (wrong value, or an error without a message). */
  const badAnswers: string[] = [];
  let sync = 0;
  let running = true;
  const loop = (async () => {
    for (let n = 1; running; n++) {
      const id = randomUUID();
      sent.push(id);
      const isSync = opts.syncEvery !== undefined && n % opts.syncEvery === 0;
      if (isSync) sync++;
      const body = { jobClass: 'jobs.Mark', jobConfig: { id, file: marker } };
      try {
        const r = await call('POST', `/group/${groupId}/job/${isSync ? 'execute' : 'submit'}`, body);
        if (r.status !== 200)
          log(`  execution ${isSync ? 'execute' : 'submit'} answered ${r.status}: ${JSON.stringify(r.body)}`);
        else if (isSync && r.body.result !== 'ok' && !String(r.body.error?.message ?? '').trim()) badAnswers.push(id);
      } catch {
        // The connection was cut (its API died) before an answer: not sent again, the client cannot tell.
        cut.add(id);
      }
      await sleep(everyMs);
    }
  })();

  return {
    groupId,
    async stop(timeoutMs) {
      running = false;
      await loop;
      const resultsOf = async (): Promise<Result[]> => {
        const all: Result[] = [];
        for (let page = 0; ; page++) {
          const r = await call('GET', `/group/${groupId}/job/result?size=500&page=${page}`);
          const content = (r.body.content ?? []) as Result[];
          all.push(...content);
          if (content.length < 500) return all;
        }
      };
      const ended = (rs: Result[]) => {
        const byId = new Map<string, Result[]>();
        for (const r of rs) {
          const id = String(r.jobConfig?.id ?? '');
          if (r.endTime !== undefined) byId.set(id, [...(byId.get(id) ?? []), r]);
        }
        return byId;
      };
      const until = Date.now() + timeoutMs;
      let byId = ended(await resultsOf());
      while (sent.some((id) => !byId.has(id) && !cut.has(id)) && Date.now() < until) {
        await sleep(2000);
        byId = ended(await resultsOf());
      }
      const runs = new Map<string, number>();
      if (existsSync(marker))
        for (const line of readFileSync(marker, 'utf8').split('\n').filter(Boolean))
          runs.set(line, (runs.get(line) ?? 0) + 1);
      const results = sent.flatMap((id) => byId.get(id) ?? []);
      const errors = results.filter((r) => r.error).map((r) => r.error!.message ?? '');
      const unclear = errors.filter((m) => m.trim().length === 0).length;
      return {
        submitted: sent.length,
        succeeded: results.filter((r) => !r.error && r.result === 'ok').length,
        failedClearly: errors.length - unclear,
        // An error without a message counts as lost: the caller cannot tell what happened.
        lost: sent.filter((id) => !byId.has(id) && !cut.has(id)).length + unclear + badAnswers.length,
        // A run without a result is lost (above), not doubled.
        duplicated: sent.filter((id) => (runs.get(id) ?? 0) > Math.max(1, byId.get(id)?.length ?? 0)).length,
        doubleResults: sent.filter((id) => (byId.get(id)?.length ?? 0) > 1).length,
        sync,
        cut: cut.size,
        errors: [...new Set(errors)].slice(0, 5),
      };
    },
  };
}
