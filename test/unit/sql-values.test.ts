// Value and column conversion of both SQL protocols (lib/sql/values.ts, hive-values.ts, trino-values.ts), from
// the representations the engines send: HiveServer2's typed columns and Hive-style text (Spark Thrift Server),
// Trino's JSON rows.
import { describe, expect, it } from 'vitest';
import { hiveColumns, hiveRows, parseHiveText, type HiveColumnDesc } from '../../lib/sql/hive-values';
import { parseExactJson, trinoColumns, trinoRowConverter, type TrinoColumn } from '../../lib/sql/trino-values';
import { exactInteger, exactNumber, int64Value, zonedTimestamp } from '../../lib/sql/values';

const TWO53 = 2 ** 53;
const i64 = (v: bigint) => {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(v);
  return { buffer, offset: 0 };
};
const bits = (...rows: number[]) => {
  const b = Buffer.alloc(Math.max(0, ...rows.map((r) => (r >> 3) + 1)));
  for (const r of rows) b[r >> 3] |= 1 << (r & 7);
  return b;
};
const NONE = Buffer.alloc(0);

describe('integers', () => {
  it('stay numbers up to ±2^53 and become decimal strings beyond', () => {
    for (const [v, want] of [
      [2n ** 53n, TWO53],
      [-(2n ** 53n), -TWO53],
      [2n ** 53n + 1n, '9007199254740993'],
      [-(2n ** 53n) - 1n, '-9007199254740993'],
      [2n ** 63n - 1n, '9223372036854775807'],
      [-(2n ** 63n), '-9223372036854775808'],
      [2n ** 32n + 5n, 4294967301],
      [-1n, -1],
      [0n, 0],
    ] as const) {
      expect(int64Value(i64(v).buffer, 0)).toBe(want);
      expect(exactInteger(v.toString())).toBe(want);
    }
  });

  it('keeps numeric text of unknown type exact', () => {
    expect(exactNumber('12.34')).toBe(12.34);
    expect(exactNumber('1.0E20')).toBe(1e20);
    expect(exactNumber('0.30000000000000004')).toBe(0.30000000000000004);
    expect(exactNumber('12345678901234567.89')).toBe('12345678901234567.89');
    expect(exactNumber('9007199254740993')).toBe('9007199254740993');
  });
});

describe('HiveServer2 result sets', () => {
  const desc = (name: string, type: number, q?: Record<string, number>, comment = ''): HiveColumnDesc => ({
    columnName: name,
    comment,
    typeDesc: {
      types: [
        {
          primitiveEntry: {
            type,
            typeQualifiers: {
              qualifiers: Object.fromEntries(Object.entries(q ?? {}).map(([k, v]) => [k, { i32Value: v }])),
            },
          },
        },
      ],
    },
  });
  const schema = [
    desc('d', 15, { precision: 10, scale: 2 }),
    desc('b', 4),
    desc('dt', 17),
    desc('ts', 8),
    desc('bin', 9),
    desc('a', 10, undefined, 'an array'),
    desc('m', 11),
    desc('s', 12),
    desc('f', 6),
    desc('ok', 0),
    desc('i', 3),
  ];

  it('describes columns: upper-case type names, 1-based index, decimal precision and scale', () => {
    const cols = hiveColumns(schema);
    expect(cols[0]).toEqual({ name: 'd', type: 'DECIMAL', index: 1, precision: 10, scale: 2, comment: null });
    expect(cols.map((c) => c.type)).toEqual([
      'DECIMAL',
      'BIGINT',
      'DATE',
      'TIMESTAMP',
      'BINARY',
      'ARRAY',
      'MAP',
      'STRUCT',
      'DOUBLE',
      'BOOLEAN',
      'INT',
    ]);
    expect(cols[5]).toMatchObject({ index: 6, precision: 0, scale: 0, comment: 'an array' });
    const complex = hiveColumns([{ columnName: 'x', typeDesc: { types: [{ arrayEntry: { objectTypePtr: 1 } }] } }]);
    expect(complex[0].type).toBe('ARRAY');
  });

  it('turns columns into rows of exact values, NULLs from the bitmap', () => {
    const text = (...values: string[]) => ({ stringVal: { values, nulls: NONE } });
    const rows = hiveRows(hiveColumns(schema), {
      columns: [
        { stringVal: { values: ['12.34', '-0.50', ''], nulls: bits(2) } },
        { i64Val: { values: [i64(2n ** 53n + 1n), i64(2n ** 53n), i64(0n)], nulls: bits(2) } },
        text('2024-01-02', '1970-01-01', '0001-01-01'),
        text('2024-01-02 03:04:05.123456', '2024-01-02 03:04:05', '2024-01-02 03:04:05.1'),
        { binaryVal: { values: [Buffer.from('ab'), Buffer.alloc(0), Buffer.from([0xff])], nulls: NONE } },
        text('[1,2]', '[]', '[null,3]'),
        text('{1:"a"}', '{}', '{"k":null}'),
        text('{"a":1,"b":"x"}', '{"a":null,"b":"y,\\"}"}', '{"a":2,"b":""}'),
        { doubleVal: { values: [1.5, NaN, -Infinity], nulls: NONE } },
        { boolVal: { values: [true, false, false], nulls: bits(1) } },
        { i32Val: { values: [7, 0, 0], nulls: bits(1, 2) } },
      ],
    });
    expect(rows).toEqual([
      [
        '12.34',
        '9007199254740993',
        '2024-01-02',
        '2024-01-02T03:04:05.123456',
        'YWI=',
        [1, 2],
        { 1: 'a' },
        { a: 1, b: 'x' },
        1.5,
        true,
        7,
      ],
      ['-0.50', TWO53, '1970-01-01', '2024-01-02T03:04:05', '', [], {}, { a: null, b: 'y,\\"}' }, 'NaN', null, null],
      [
        null,
        null,
        '0001-01-01',
        '2024-01-02T03:04:05.1',
        '/w==',
        [null, 3],
        { k: null },
        { a: 2, b: '' },
        '-Infinity',
        false,
        null,
      ],
    ]);
  });

  it('reads a fetch with no columns as no rows', () => {
    expect(hiveRows([], { columns: [] })).toEqual([]);
    expect(hiveRows([], {})).toEqual([]);
  });
});

describe('Hive-style text', () => {
  it('parses arrays, maps and structs nested, with nulls inside', () => {
    expect(parseHiveText('[{"k":[{"z":null}]}]')).toEqual([{ k: [{ z: null }] }]);
    expect(parseHiveText('{"a":[1,null,3],"b":{"c":{1:[true,false]}}}')).toEqual({
      a: [1, null, 3],
      b: { c: { 1: [true, false] } },
    });
    expect(parseHiveText('[[],[[]],{}]')).toEqual([[], [[]], {}]);
  });

  it('reads unquoted map keys as strings and non-string keys as their JSON', () => {
    expect(parseHiveText('{1:"a",-2:"b",3.5:"c"}')).toEqual({ '1': 'a', '-2': 'b', '3.5': 'c' });
    expect(parseHiveText('{9007199254740993:1}')).toEqual({ '9007199254740993': 1 });
    expect(parseHiveText('{{"a":1}:"x"}')).toEqual({ '{"a":1}': 'x' });
    expect(parseHiveText('{true:1,null:2}')).toEqual({ true: 1, null: 2 });
  });

  it('keeps numbers exact', () => {
    expect(
      parseHiveText('[9007199254740993,-9007199254740993,9007199254740992,1.50,0.1,1.0E20,12345678901234567.89]'),
    ).toEqual(['9007199254740993', '-9007199254740993', TWO53, 1.5, 0.1, 1e20, '12345678901234567.89']);
    expect(parseHiveText('[NaN,Infinity,-Infinity]')).toEqual(['NaN', 'Infinity', '-Infinity']);
  });

  it('reads bare dates, timestamps and other words as strings', () => {
    expect(parseHiveText('[2024-01-02]')).toEqual(['2024-01-02']);
    expect(parseHiveText('{"t":2024-01-02 03:04:05.5}')).toEqual({ t: '2024-01-02T03:04:05.5' });
    expect(parseHiveText('[1 00:00:00.000000000]')).toEqual(['1 00:00:00.000000000']);
    expect(parseHiveText('{2024-01-02 03:04:05:"x"}')).toEqual({ '2024-01-02T03:04:05': 'x' });
  });

  it('takes strings as they are: quotes, escapes, commas and braces inside', () => {
    expect(parseHiveText('{"a":1,"b":"x"y,}"}')).toEqual({ a: 1, b: 'x"y,}' });
    expect(parseHiveText('["x]"],[""]]'.replace(/^/, '['))).toEqual([['x]'], ['']]);
    expect(parseHiveText('{"s":"a\\b\\"c"}')).toEqual({ s: 'a\\b\\"c' });
    expect(parseHiveText('["a","b"]')).toEqual(['a', 'b']);
    expect(parseHiveText('["null","",","]')).toEqual(['null', '', ',']);
    expect(parseHiveText('{"b":"x","c"}')).toEqual({ b: 'x","c' });
    expect(parseHiveText('{"k":"v:1","n":{"i":"}{"}}')).toEqual({ k: 'v:1', n: { i: '}{' } });
    expect(parseHiveText('{"a":"he said "hi", then left","b":2}')).toEqual({ a: 'he said "hi", then left', b: 2 });
  });

  it('gives back the text it cannot read', () => {
    for (const bad of ['[1,2', '{"a"}', '[1]]', '']) expect(parseHiveText(bad)).toBe(bad);
  });
});

describe('Trino results', () => {
  const t = (rawType: string, ...args: { kind: string; value: unknown }[]) => ({ rawType, arguments: args });
  const type = (sig: ReturnType<typeof t>) => ({ kind: 'TYPE', value: sig });
  const field = (name: string | undefined, sig: ReturnType<typeof t>) => ({
    kind: 'NAMED_TYPE',
    value: { ...(name ? { fieldName: { name } } : {}), typeSignature: sig },
  });
  const long = (value: number) => ({ kind: 'LONG', value });
  const col = (name: string, sig: ReturnType<typeof t>): TrinoColumn => ({
    name,
    type: sig.rawType,
    typeSignature: sig,
  });
  const cols = [
    col('d', t('decimal', long(10), long(2))),
    col('b', t('bigint')),
    col('dt', t('date')),
    col('ts', t('timestamp', long(6))),
    col('tz', t('timestamp with time zone', long(3))),
    col('bin', t('varbinary')),
    col('a', t('array', type(t('bigint')))),
    col('m', t('map', type(t('integer')), type(t('varchar', long(1))))),
    col('s', t('row', field('a', t('integer')), field('b', t('array', type(t('timestamp', long(3))))))),
    col('anon', t('row', field(undefined, t('integer')), field(undefined, t('varchar')))),
    col('x', t('double')),
  ];

  it('describes columns', () => {
    const c = trinoColumns(cols);
    expect(c[0]).toEqual({ name: 'd', type: 'DECIMAL', index: 1, precision: 10, scale: 2, comment: null });
    expect(c.map((x) => x.type)).toEqual([
      'DECIMAL',
      'BIGINT',
      'DATE',
      'TIMESTAMP',
      'TIMESTAMP WITH TIME ZONE',
      'VARBINARY',
      'ARRAY',
      'MAP',
      'ROW',
      'ROW',
      'DOUBLE',
    ]);
    expect(c[3]).toMatchObject({ index: 4, precision: 0, scale: 0 });
  });

  it('parses JSON with big integers exact, in data and nested, not inside strings', () => {
    const text =
      '{"data":[["12.34",9007199254740993,"2024-01-02","2024-01-02 03:04:05.123456","2024-01-02 03:04:05.123 UTC","YWI=",' +
      '[9223372036854775807,-9223372036854775808,9007199254740992,null],{"1":"a"},[1,["2024-01-02 03:04:05.000",null]],[2,"x"],' +
      '0.30000000000000004],[null,-9007199254740993,null,null,"2024-07-01 12:00:00.000 Europe/Berlin",null,null,null,null,null,"NaN"]],' +
      '"s":"12345678901234567890","e":1.2345678901234567E19}';
    const parsed = parseExactJson(text) as { data: unknown[][]; s: string; e: number };
    expect(parsed.s).toBe('12345678901234567890');
    expect(parsed.e).toBe(1.2345678901234567e19);
    expect(trinoRowConverter(cols)(parsed.data)).toEqual([
      [
        '12.34',
        '9007199254740993',
        '2024-01-02',
        '2024-01-02T03:04:05.123456',
        '2024-01-02T03:04:05.123Z',
        'YWI=',
        ['9223372036854775807', '-9223372036854775808', TWO53, null],
        { 1: 'a' },
        { a: 1, b: ['2024-01-02T03:04:05.000', null] },
        { field0: 2, field1: 'x' },
        0.30000000000000004,
      ],
      [null, '-9007199254740993', null, null, '2024-07-01T12:00:00.000+02:00', null, null, null, null, null, 'NaN'],
    ]);
  });

  it('leaves rows alone when no column needs converting', () => {
    const rows = [[1, 'a']];
    expect(trinoRowConverter([col('i', t('integer')), col('v', t('varchar'))])(rows)).toBe(rows);
    expect(parseExactJson('[1,"12345678901234567"]')).toEqual([1, '12345678901234567']);
  });

  it('writes zoned timestamps with their offset', () => {
    expect(zonedTimestamp('2024-01-02 03:04:05.123 America/New_York')).toBe('2024-01-02T03:04:05.123-05:00');
    expect(zonedTimestamp('2024-07-02 03:04:05 America/New_York')).toBe('2024-07-02T03:04:05-04:00');
    expect(zonedTimestamp('2024-01-02 03:04:05 +05:30')).toBe('2024-01-02T03:04:05+05:30');
    expect(zonedTimestamp('1970-01-01 00:00:00.000 UTC')).toBe('1970-01-01T00:00:00.000Z');
    expect(zonedTimestamp('2024-01-02 03:04:05 Nowhere/Else')).toBe('2024-01-02 03:04:05 Nowhere/Else');
  });
});
