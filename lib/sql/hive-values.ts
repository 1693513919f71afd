// HiveServer2's results as exact values (values.ts): one typed array per column, complex values (ARRAY, MAP,
// STRUCT) as Hive-style text.
import type { SqlColumn } from '../../domain/sql';
import { column, exactNumber, floatValue, int64Value, isoTimestamp, setKey } from './values';

// ---- Hive-style text of ARRAY, MAP and STRUCT values ------------------------------------------------
// Spark's Thrift Server prints them like JSON, loosely: strings are quoted without escaping (one may hold `"`,
// `,` or `}`), map keys that are not strings are bare (`{1:"a"}`), and dates, timestamps, intervals and binary
// are bare words. So a string or bare word may end at several places: each takes its first end that lets the
// rest parse, trying the first ends first (a depth-first search over the tokens' ends, bounded).

const BACKTRACK = new Error('hive text: backtrack');
const MAX_ATTEMPTS = 64;
const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/;
const TIMESTAMP_TEXT = /^-?\d{4,}-\d\d-\d\d \d\d:\d\d(?::\d\d(?:\.\d+)?)?$/;

/** Complex value text from HiveServer2 → JSON values (objects for maps and structs); the text itself if unparsable. */
export function parseHiveText(text: string): unknown {
  const choices: number[] = [];
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const p = new HiveText(text, choices);
    try {
      return p.parse();
    } catch (e) {
      if (e !== BACKTRACK) throw e;
      // Next end of the last token before the failure; a token out of ends gives the one before it another go.
      const j = p.exhausted >= 0 ? p.exhausted - 1 : p.seen - 1;
      if (j < 0) return text;
      choices.length = j + 1;
      choices[j] = (choices[j] ?? 0) + 1;
    }
  }
  return text;
}

class HiveText {
  private pos = 0;
  /** Tokens met so far in this attempt, and the one that ran out of ends (-1: none). */
  seen = 0;
  exhausted = -1;

  constructor(
    private readonly s: string,
    private readonly choices: number[],
  ) {}

  parse(): unknown {
    const v = this.value('');
    if (this.pos !== this.s.length) throw BACKTRACK;
    return v;
  }

  /** A value followed by one of `stops` ('' at the top: the end of the text). */
  private value(stops: string): unknown {
    const c = this.s[this.pos];
    if (c === '[') return this.list();
    if (c === '{') return this.object();
    const start = this.pos;
    if (c === '"') {
      const end = this.end(start + 1, stops, true);
      this.pos = end + 1;
      return this.s.slice(start + 1, end);
    }
    this.pos = this.end(start, stops, false);
    return bareValue(this.s.slice(start, this.pos));
  }

  private list(): unknown[] {
    const out: unknown[] = [];
    if (this.s[++this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value(',]'));
      const c = this.s[this.pos++];
      if (c === ']') return out;
      if (c !== ',') throw BACKTRACK;
    }
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.s[++this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      const key = this.value(':');
      if (this.s[this.pos++] !== ':') throw BACKTRACK;
      setKey(out, keyText(key), this.value(',}'));
      const c = this.s[this.pos++];
      if (c === '}') return out;
      if (c !== ',') throw BACKTRACK;
    }
  }

  /** Where this token ends: its n-th possible end, n from `choices`. Bare words hold no quote or bracket. */
  private end(start: number, stops: string, quoted: boolean): number {
    const token = this.seen++;
    let skip = this.choices[token] ?? 0;
    const s = this.s;
    for (let i = start; i <= s.length; i++) {
      const ch = s[i];
      const ends = quoted ? ch === '"' && this.stopAt(i + 1, stops) : i > start && this.stopAt(i, stops);
      if (ends && skip-- === 0) return i;
      if (!quoted && (ch === '"' || ch === '[' || ch === ']' || ch === '{' || ch === '}')) break;
    }
    this.exhausted = token;
    throw BACKTRACK;
  }

  private stopAt(i: number, stops: string): boolean {
    return i === this.s.length ? stops === '' : i < this.s.length && stops.includes(this.s[i]);
  }
}

function bareValue(t: string): unknown {
  if (t === 'null') return null;
  if (t === 'true' || t === 'false') return t === 'true';
  if (NUMBER.test(t)) return exactNumber(t);
  return TIMESTAMP_TEXT.test(t) ? isoTimestamp(t) : t;
}

const keyText = (k: unknown): string =>
  typeof k === 'string' ? k : k !== null && typeof k === 'object' ? JSON.stringify(k) : String(k);

// ---- HiveServer2 result sets -------------------------------------------------------------------------

/** The parts of TCLIService's TColumnDesc and TColumn read here (thrift reads maps as plain objects). */
export interface HiveColumnDesc {
  columnName: string;
  comment?: string | null;
  typeDesc: { types: HiveTypeEntry[] };
}
interface HiveTypeEntry {
  primitiveEntry?: {
    type: number;
    typeQualifiers?: { qualifiers?: Record<string, { i32Value?: number | null }> } | null;
  } | null;
  arrayEntry?: unknown;
  mapEntry?: unknown;
  structEntry?: unknown;
  unionEntry?: unknown;
}
interface HiveValues {
  values: unknown[];
  nulls: Buffer;
}
type HiveColumnValues = Partial<
  Record<
    'boolVal' | 'byteVal' | 'i16Val' | 'i32Val' | 'i64Val' | 'doubleVal' | 'stringVal' | 'binaryVal',
    HiveValues | null
  >
>;
export interface HiveRowSet {
  columns?: HiveColumnValues[] | null;
}

/** TTypeId → name (TCLIService.thrift). */
const HIVE_TYPES = (
  'BOOLEAN,TINYINT,SMALLINT,INT,BIGINT,FLOAT,DOUBLE,STRING,TIMESTAMP,BINARY,ARRAY,MAP,STRUCT,UNIONTYPE,USER_DEFINED,' +
  'DECIMAL,NULL,DATE,VARCHAR,CHAR,INTERVAL_YEAR_MONTH,INTERVAL_DAY_TIME,TIMESTAMP WITH LOCAL TIME ZONE'
).split(',');

function hiveTypeName(e: HiveTypeEntry | undefined): string {
  if (e?.primitiveEntry) return HIVE_TYPES[e.primitiveEntry.type] ?? `TYPE_${e.primitiveEntry.type}`;
  if (e?.arrayEntry) return 'ARRAY';
  if (e?.mapEntry) return 'MAP';
  if (e?.structEntry) return 'STRUCT';
  return e?.unionEntry ? 'UNIONTYPE' : 'USER_DEFINED';
}

export function hiveColumns(descs: HiveColumnDesc[]): SqlColumn[] {
  return descs.map((d, i) => {
    const entry = d.typeDesc.types[0];
    const type = hiveTypeName(entry);
    const q = type === 'DECIMAL' ? entry.primitiveEntry?.typeQualifiers?.qualifiers : undefined;
    return column(d.columnName, type, i + 1, q?.precision?.i32Value ?? 0, q?.scale?.i32Value ?? 0, d.comment);
  });
}

/** HiveServer2's columns of one fetch → rows of exact values. */
export function hiveRows(columns: SqlColumn[], set: HiveRowSet): unknown[][] {
  const values = (set.columns ?? []).map((c, i) => columnValues(c, columns[i]?.type));
  const n = values.length ? values[0].length : 0;
  const rows = new Array<unknown[]>(n);
  for (let r = 0; r < n; r++) {
    const row = new Array<unknown>(values.length);
    for (let c = 0; c < values.length; c++) row[c] = values[c][r];
    rows[r] = row;
  }
  return rows;
}

function columnValues(col: HiveColumnValues, type: string | undefined): unknown[] {
  let v: HiveValues | null | undefined;
  let out: unknown[];
  if ((v = col.stringVal)) out = textValues(v.values as string[], type);
  else if ((v = col.i64Val))
    out = (v.values as { buffer: Buffer; offset: number }[]).map((x) => int64Value(x.buffer, x.offset));
  else if ((v = col.doubleVal)) out = (v.values as number[]).map((x) => floatValue(x));
  else if ((v = col.binaryVal)) out = (v.values as Buffer[]).map((b) => b.toString('base64'));
  else if ((v = col.boolVal ?? col.byteVal ?? col.i16Val ?? col.i32Val)) out = v.values;
  else return [];
  // Bit i of the bitmap (least significant first) marks row i NULL.
  const nulls = v.nulls;
  for (let b = 0; b < nulls.length; b++) {
    if (nulls[b]) for (let k = 0; k < 8; k++) if (nulls[b] & (1 << k) && b * 8 + k < out.length) out[b * 8 + k] = null;
  }
  return out;
}

function textValues(values: string[], type: string | undefined): unknown[] {
  if (type === 'TIMESTAMP' || type === 'TIMESTAMP WITH LOCAL TIME ZONE') return values.map(isoTimestamp);
  if (type === 'ARRAY' || type === 'MAP' || type === 'STRUCT' || type === 'UNIONTYPE') return values.map(parseHiveText);
  return values;
}
