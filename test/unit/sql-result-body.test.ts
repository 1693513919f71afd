// The body of POST /sql/execute (api/sql/execute/result-body.ts), against a response that records its writes:
// Ilum's JSON object, whole or streamed, is JSON.stringify of the result; JSON lines carry the same result.
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ResultBody, STREAM_AFTER_BYTES, type ResultType } from '../../api/sql/execute/result-body';
import type { SqlColumn, SqlOperationInfo } from '../../domain/sql';

function recorder() {
  const chunks: Buffer[] = [];
  let ended = false;
  const res = {
    destroyed: false,
    write: (b: Buffer) => (chunks.push(b), true),
    end: () => void (ended = true),
    destroy: () => void (res.destroyed = true),
    on: () => res,
    off: () => res,
  };
  return { res: res as unknown as ServerResponse, text: () => Buffer.concat(chunks).toString(), ended: () => ended };
}

const columns: SqlColumn[] = [
  { name: 'id', type: 'BIGINT', index: 1, precision: 0, scale: 0, comment: null },
  { name: 's', type: 'STRING', index: 2, precision: 0, scale: 0, comment: null },
];
const info: SqlOperationInfo = { state: 'FINISHED', creationTime: 1, startTime: 2, completionTime: 3 };
const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => [from + i, `"row ${from + i}"`]);

/** Runs batches of `sizes` rows through a body of `type`; returns the bytes sent and whether it started early. */
async function run(type: ResultType, sizes: number[], ended?: SqlOperationInfo, serialised = false) {
  const r = recorder();
  let started = 0;
  const body = new ResultBody(r.res, () => started++, 1, type);
  body.begin(columns, ended);
  let from = 0;
  for (const n of sizes) {
    await (serialised ? body.jsonRows(asJson(batch(from, n))) : body.rows(batch(from, n)));
    from += n;
  }
  if (body.streaming) {
    await body.finish(info, ['log line']);
    return { text: r.text(), streamed: true, started, count: body.count, ended: r.ended() };
  }
  return {
    text: body.whole({ info, columns, logs: ['log line'] }).toString(),
    streamed: false,
    started,
    count: body.count,
    ended: false,
  };
}

const all = (n: number) => batch(0, n);

/** A batch as a protocol that serialises its own rows hands it over (lib/sql/types.ts JsonRows). */
const asJson = (rows: unknown[][]) => ({
  count: rows.length,
  encode: (from: number, to: number, head: string, tail: string) =>
    Buffer.from(head + JSON.stringify(rows.slice(from, to)).slice(1, -1) + tail),
});

describe('SQL result body', () => {
  it('rows the protocol serialised give the same bytes as values, in both shapes, whole or streamed', async () => {
    for (const type of ['application/json', 'application/x-ndjson'] as const)
      for (const sizes of [[3, 2], [5_000, 2_500, 1], [1_500]]) {
        const values = await run(type, sizes, info);
        const serialised = await run(type, sizes, info, true);
        expect(serialised).toEqual(values);
      }
  });

  it('a small result is JSON.stringify of the whole result, sent in one piece', async () => {
    const out = await run('application/json', [3, 2]);
    expect(out.streamed).toBe(false);
    expect(out.text).toBe(JSON.stringify({ info, columns, rows: all(5), logs: ['log line'] }));
  });

  it('a large one streams once its rows pass the threshold, and is still the JSON of the same object', async () => {
    // Rows of ~20 bytes: 5,000 rows a batch is ~100 KB, over the threshold at the first batch.
    const sizes = [5_000, 2_500, 1];
    const out = await run('application/json', sizes);
    expect(out.streamed).toBe(true);
    expect(out.started).toBe(1);
    expect(out.ended).toBe(true);
    expect(out.count).toBe(7_501);
    // info known at the start (the Thrift Server's case) leads; without it, it follows the rows (Trino's).
    const early = await run('application/json', sizes, info);
    expect(early.text).toBe(JSON.stringify({ info, columns, rows: all(7_501), logs: ['log line'] }));
    expect(out.text).toBe(JSON.stringify({ columns, rows: all(7_501), info, logs: ['log line'] }));
  });

  it('as JSON lines: columns, rows in lines of up to 1,000, info and logs last; whole or streamed', async () => {
    const lines = (text: string) => {
      expect(text.endsWith('\n')).toBe(true);
      return text
        .slice(0, -1)
        .split('\n')
        .map((l) => JSON.parse(l));
    };
    const small = await run('application/x-ndjson', [3, 2]);
    expect(small.streamed).toBe(false);
    expect(lines(small.text)).toEqual([
      { columns },
      { rows: all(3) },
      { rows: batch(3, 2) },
      { info, logs: ['log line'] },
    ]);
    // Batches of 2,500 rows: lines of at most 1,000, in order, and none spans two batches.
    const large = await run('application/x-ndjson', [2_500, 2_500, 1], info);
    expect(large.streamed).toBe(true);
    const got = lines(large.text);
    expect(got[0]).toEqual({ columns });
    expect(got.at(-1)).toEqual({ info, logs: ['log line'] });
    expect(got.slice(1, -1).map((l) => l.rows.length)).toEqual([1000, 1000, 500, 1000, 1000, 500, 1]);
    expect(got.slice(1, -1).flatMap((l) => l.rows)).toEqual(all(5_001));
    expect(Buffer.byteLength(large.text)).toBeGreaterThan(STREAM_AFTER_BYTES);
  });

  it('a result that did not finish sends no rows, in either shape', async () => {
    const failed: SqlOperationInfo = { ...info, state: 'ERROR', exception: 'no such table' };
    for (const type of ['application/json', 'application/x-ndjson'] as const) {
      const r = recorder();
      const body = new ResultBody(r.res, () => undefined, 1, type);
      body.begin(columns);
      await body.rows(batch(0, 2));
      const text = body.whole({ info: failed, columns, logs: [] }).toString();
      if (type === 'application/json') expect(JSON.parse(text)).toEqual({ info: failed, columns, rows: [], logs: [] });
      else expect(text).toBe(`${JSON.stringify({ columns })}\n${JSON.stringify({ info: failed, logs: [] })}\n`);
    }
  });
});

describe('SQL result body back-pressure', () => {
  it('a batch written into a full socket resolves at its drain, with one listener however many pieces', async () => {
    const emitter = new EventEmitter();
    const chunks: Buffer[] = [];
    const res = Object.assign(emitter, {
      destroyed: false,
      write: (b: Buffer) => (chunks.push(b), false),
      end: () => undefined,
      destroy: () => undefined,
    }) as unknown as ServerResponse;
    const body = new ResultBody(res, () => undefined, 1, 'application/x-ndjson');
    body.begin(columns, info);
    const wait = body.rows(batch(0, 10_000));
    expect(wait).toBeInstanceOf(Promise);
    // Every piece was handed to the socket (it buffers them), and one drain wakes the sender.
    expect(Buffer.concat(chunks).toString().split('\n')).toHaveLength(1 + 10 + 1); // columns, 10 pieces, ''
    expect(emitter.listenerCount('drain')).toBe(1);
    let done = false;
    void (wait as Promise<void>).then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    emitter.emit('drain');
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(true);
    expect(emitter.listenerCount('drain')).toBe(0);
  });
});
