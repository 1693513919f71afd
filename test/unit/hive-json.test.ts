// HiveServer2 batches written as JSON straight from the received bytes (lib/sql/hive-json.ts) against the
// value path (hive-driver's generated reader, then hive-values.ts, then JSON.stringify): the same bytes for
// every column kind, NULLs, text that needs escaping or is not ASCII or not even UTF-8, integers beyond 2^53,
// timestamps, complex values, and random text. Frames are written with thrift's own protocol writer.
import { createRequire } from 'node:module';
import { thrift as hive } from 'hive-driver';
import { describe, expect, it } from 'vitest';
import type { SqlColumn } from '../../domain/sql';
import { HiveJsonRows, readFetchResults } from '../../lib/sql/hive-json';
import { hiveRows, type HiveRowSet } from '../../lib/sql/hive-values';

const requireHere = createRequire(import.meta.url);
const thriftIndex = requireHere.resolve('thrift', { paths: [requireHere.resolve('hive-driver')] });
const thriftLib = requireHere(thriftIndex);
const Int64 = requireHere(requireHere.resolve('node-int64', { paths: [thriftIndex] }));
const T = hive.TCLIService_types;

type Cell = unknown;
type ColumnSpec = { type: string; field: string; values: Cell[]; nulls?: number[] };

const col = (name: string, type: string, index: number): SqlColumn => ({
  name,
  type,
  index,
  precision: 0,
  scale: 0,
  comment: null,
});

/** TCLIService_FetchResults_result { success: TFetchResultsResp } as thrift's binary protocol writes it. */
function frame(specs: ColumnSpec[]): Buffer {
  const columns = specs.map((s) => {
    const bitmap = Buffer.alloc(Math.ceil(s.values.length / 8));
    for (const i of s.nulls ?? []) bitmap[i >> 3] |= 1 << (i & 7);
    return new T.TColumn({ [s.field]: { values: s.values, nulls: bitmap } });
  });
  const resp = new T.TFetchResultsResp({
    status: new T.TStatus({ statusCode: 0 }),
    hasMoreRows: false,
    results: new T.TRowSet({ startRowOffset: new Int64(0), rows: [], columns }),
  });
  let out: Buffer = Buffer.alloc(0);
  const trans = new thriftLib.TBufferedTransport(undefined, (b: Buffer) => (out = Buffer.concat([out, b])));
  const p = new thriftLib.TBinaryProtocol(trans);
  p.writeStructBegin('FetchResults_result');
  p.writeFieldBegin('success', thriftLib.Thrift.Type.STRUCT, 0);
  resp.write(p);
  p.writeFieldEnd();
  p.writeFieldStop();
  p.writeStructEnd();
  trans.flush();
  return out;
}

const input = (bytes: Buffer) => new thriftLib.TBinaryProtocol(new thriftLib.TFramedTransport(Buffer.from(bytes)));

/** The value path: the generated reader, hiveRows, JSON.stringify. */
function viaValues(bytes: Buffer, types: SqlColumn[]): unknown[][] {
  const p = input(bytes);
  p.readStructBegin();
  p.readFieldBegin();
  const resp = new T.TFetchResultsResp();
  resp.read(p);
  return hiveRows(types, resp.results as HiveRowSet);
}

function viaJson(bytes: Buffer, types: SqlColumn[], count?: number): HiveJsonRows {
  const r = readFetchResults(input(bytes));
  expect(r?.status.statusCode).toBe(0);
  return new HiveJsonRows(types, r!.results!, count);
}

function same(specs: ColumnSpec[]) {
  const types = specs.map((s, i) => col(`c${i}`, s.type, i + 1));
  const bytes = frame(specs);
  const rows = viaValues(bytes, types);
  const json = viaJson(bytes, types);
  expect(json.count).toBe(rows.length);
  expect(json.encode(0, json.count, '[', ']').toString()).toBe(JSON.stringify(rows));
  return { rows, json };
}

const i64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(v);
  return new Int64(b);
};

describe('HiveServer2 rows as JSON from the frame', () => {
  it('writes every column kind as the value path serialises it, NULLs included', () => {
    const big = [0n, -1n, 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n), -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n)];
    const n = big.length;
    const { rows } = same([
      { type: 'BIGINT', field: 'i64Val', values: big.map(i64), nulls: [2] },
      { type: 'INT', field: 'i32Val', values: [0, -1, 2147483647, -2147483648, 7, 8, 9, 10, 11], nulls: [8] },
      { type: 'SMALLINT', field: 'i16Val', values: [0, -1, 32767, -32768, 5, 6, 7, 8, 9] },
      { type: 'TINYINT', field: 'byteVal', values: [0, -1, 127, -128, 5, 6, 7, 8, 9], nulls: [0] },
      { type: 'BOOLEAN', field: 'boolVal', values: [true, false, true, false, true, false, true, false, true] },
      {
        type: 'DOUBLE',
        field: 'doubleVal',
        values: [0.1, -0, NaN, Infinity, -Infinity, 1e21, 5e-324, 123456789.125, -2.5],
        nulls: [7],
      },
      {
        type: 'BINARY',
        field: 'binaryVal',
        values: [Buffer.from([0, 1, 255]), Buffer.alloc(0), Buffer.from('abc'), ...Array(n - 3).fill(Buffer.from('z'))],
        nulls: [1],
      },
    ]);
    expect(rows[0][0]).toBe(0);
    expect(rows[4][0]).toBe('9007199254740993');
  });

  it('writes text as the value path does: escapes, non-ASCII, invalid UTF-8, timestamps, complex values', () => {
    const text = [
      'plain',
      '',
      'quote " and backslash \\',
      'line\nbreak\ttab\u0001',
      'caf\u00e9 \u{1F600}',
      'del\u007f',
      Buffer.from([0x61, 0xff, 0xfe, 0x62]), // not UTF-8: replacement characters, as toString gives
      '</script>',
    ];
    same([{ type: 'STRING', field: 'stringVal', values: text, nulls: [1] }]);
    same([{ type: 'VARCHAR', field: 'stringVal', values: text }]);
    same([
      {
        type: 'TIMESTAMP',
        field: 'stringVal',
        values: [
          '2024-01-02 03:04:05.123',
          '2024-01-02',
          '2024-01-02 03:04',
          'x',
          '2024-01-02\u00e9 03',
          '2024-01-02 0"',
        ],
      },
    ]);
    same([
      {
        type: 'ARRAY',
        field: 'stringVal',
        values: ['[1,2]', '[]', '["a,b","c"]', 'not [ complex', '[{"a":1,"b":"x"y"}]', '[null]'],
        nulls: [5],
      },
    ]);
    same([{ type: 'MAP', field: 'stringVal', values: ['{1:"a"}', '{"__proto__":1}', '{}'] }]);
    same([{ type: 'DECIMAL', field: 'stringVal', values: ['12.34', '-0.001', '99999999999999999999.5'] }]);
  });

  it('writes random text exactly as the value path', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = [
      'a',
      'Z',
      '0',
      ' ',
      '"',
      '\\',
      '\n',
      '\u0000',
      '\u001f',
      '\u007f',
      '\u00e9',
      '\u4e2d',
      '\u{1F600}',
    ];
    const values = Array.from({ length: 500 }, () =>
      Array.from({ length: Math.floor(rnd() * 12) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join(''),
    );
    same([
      { type: 'STRING', field: 'stringVal', values, nulls: [3, 99, 498] },
      {
        type: 'BIGINT',
        field: 'i64Val',
        values: values.map((_, i) => i64(BigInt(Math.floor((rnd() - 0.5) * 2 ** 60)) * BigInt(i % 3))),
      },
    ]);
  });

  it('writes a range of rows between a head and a tail, and stops at the count it was given', () => {
    const types = [col('id', 'BIGINT', 1), col('s', 'STRING', 2)];
    const ids = Array.from({ length: 25 }, (_, i) => i);
    const bytes = frame([
      { type: 'BIGINT', field: 'i64Val', values: ids.map((i) => i64(BigInt(i))) },
      { type: 'STRING', field: 'stringVal', values: ids.map(String) },
    ]);
    const rows = viaValues(bytes, types);
    const json = viaJson(bytes, types, 20);
    expect(json.count).toBe(20);
    expect(json.encode(5, 8, '{"rows":[', ']}\n').toString()).toBe(`{"rows":${JSON.stringify(rows.slice(5, 8))}}\n`);
    expect(json.encode(0, 1, ',', '').toString()).toBe(`,${JSON.stringify(rows[0])}`);
  });

  it('gives columns shorter than the first NULLs, and a result of no columns no rows', () => {
    same([
      { type: 'INT', field: 'i32Val', values: [1, 2, 3] },
      { type: 'STRING', field: 'stringVal', values: ['a'] },
    ]);
    expect(viaJson(frame([]), []).count).toBe(0);
  });

  it('refuses a frame whose lengths run past its end', () => {
    const bytes = frame([{ type: 'STRING', field: 'stringVal', values: ['abcdef'] }]);
    const cut = bytes.subarray(0, bytes.length - 12);
    expect(() => readFetchResults(input(cut))).toThrow();
    // A list that claims more values than the frame could hold: refused (the reader checks the claim first).
    const at = bytes.indexOf(Buffer.from([11, 0, 0, 0, 1, 0, 0, 0, 6]));
    expect(at).toBeGreaterThan(0);
    const huge = Buffer.from(bytes);
    huge.writeInt32BE(0x7fffffff, at + 1);
    expect(() => readFetchResults(input(huge))).toThrow(/malformed/);
  });
});
