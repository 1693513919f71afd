// Trino pages with their rows left as text (lib/sql/trino-json.ts): the rows found by the scan are the JSON
// of the same values as the parsed path's, the rest of the page parses as before, and whatever could differ
// (16-digit integers, rewritten types, a malformed page) is left to the parsed path.
import { describe, expect, it } from 'vitest';
import { rowsPassThrough, splitPage } from '../../lib/sql/trino-json';
import { parseExactJson, type TrinoColumn, type TrinoTypeSignature } from '../../lib/sql/trino-values';

const page = (data: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'q',
    nextUri: 'http://t/v1/statement/q/1',
    columns: [{ name: 'data', type: 'varchar' }],
    data,
    ...extra,
    stats: { state: 'RUNNING' },
  });

/** Splits `text`; its rows, encoded in pieces, must parse to the parsed path's rows. */
function check(text: string) {
  const whole = parseExactJson(text) as { data: unknown[][] };
  const split = splitPage(text)!;
  expect(split).toBeDefined();
  expect(split.rows.count).toBe(whole.data.length);
  expect(JSON.parse(split.rows.json)).toEqual(whole.data);
  const pieces: string[] = [];
  for (let i = 0; i < split.rows.count; i += 2)
    pieces.push(split.rows.encode(i, Math.min(i + 2, split.rows.count), i ? ',' : '', '').toString());
  expect(JSON.parse(`[${pieces.join('')}]`)).toEqual(whole.data);
  expect(parseExactJson(split.rest)).toEqual({ ...whole, data: null });
  return split;
}

describe('Trino rows as text', () => {
  it('finds every row of the top-level data, whatever its values hold', () => {
    check(
      page([
        [1, 'plain', null, true, false, -2.5e-7, 1.0e21],
        [
          2,
          'quote " backslash \\ and \\" both \\\\',
          [1, [2, ['3]']]],
          { a: '}', b: [null] },
          'caf\u00e9 \u{1F600}',
          0,
          -0,
        ],
        [3, '', [], {}, '\n\t\u0001', '"data":[1]', 'x'],
        [4, 'a"],[9', 'b\\', 'c\\"]}', { 'k"]': '"' }],
      ]),
    );
    // Spacing Trino does not send, but JSON allows.
    const spaced = `{ "id" : "q" , "columns" : [ ] , "data" : [ [ 1 , "a" ] ,\n [ 2 , "b" ] ] , "stats" : { } }`;
    expect(check(spaced).rows.count).toBe(2);
  });

  it('an empty data array has no rows; a page without data is not split', () => {
    expect(check(page([])).rows.count).toBe(0);
    expect(splitPage(JSON.stringify({ id: 'q', stats: {} }))).toBeUndefined();
    // "data" only as a nested key or inside a string: not the page's data.
    expect(splitPage(JSON.stringify({ id: '"data":[[1]]', columns: [{ data: [[1]] }] }))).toBeUndefined();
  });

  it('stops at a given number of rows', () => {
    const rows = check(page([[1], [2], [3], [4]])).rows;
    const two = rows.limit(2);
    expect(two.count).toBe(2);
    expect(JSON.parse(two.json)).toEqual([[1], [2]]);
    expect(rows.limit(10)).toBe(rows);
  });

  it('leaves pages with 16-digit integers, and malformed ones, to the parsed path', () => {
    expect(splitPage(page([[1]]).replace('[[1]]', '[[9007199254740993]]'))).toBeUndefined();
    expect(splitPage(page([[1, 'account 1234567890123456']]))).toBeUndefined();
    const ok = page([
      [1, 'a'],
      [2, 'b'],
    ]);
    for (const cut of [ok.length - 30, ok.indexOf('"b"') + 2, ok.indexOf('[[') + 1])
      expect(splitPage(ok.slice(0, cut))).toBeUndefined();
    expect(splitPage('not json')).toBeUndefined();
  });

  it('passes rows through only when no column is of a type whose values are rewritten', () => {
    const sig = (rawType: string, ...args: TrinoTypeSignature[]): TrinoTypeSignature => ({
      rawType,
      arguments: args.map((value) => ({ kind: 'TYPE', value })),
    });
    const leaf = (rawType: string): TrinoTypeSignature => ({ rawType, arguments: [] });
    const col = (typeSignature: TrinoColumn['typeSignature'], type = 'x'): TrinoColumn => ({
      name: 'c',
      type,
      typeSignature,
    });
    expect(rowsPassThrough([col(leaf('bigint')), col(leaf('varchar')), col(sig('array', leaf('double')))])).toBe(true);
    expect(rowsPassThrough([col(sig('map', leaf('bigint'), leaf('decimal')))])).toBe(true);
    expect(rowsPassThrough([col(leaf('timestamp'))])).toBe(false);
    expect(rowsPassThrough([col(leaf('timestamp with time zone'))])).toBe(false);
    expect(rowsPassThrough([col(sig('array', sig('row', leaf('integer'))))])).toBe(false);
    expect(rowsPassThrough([col(sig('map', leaf('varchar'), leaf('timestamp')))])).toBe(false);
    expect(rowsPassThrough([col(undefined, 'timestamp(3)')])).toBe(false);
    expect(rowsPassThrough([col(undefined, 'varchar(10)')])).toBe(true);
  });
});
