// Exact values and column descriptions from both protocols (domain/sql.ts SqlStatementResult): integers beyond
// ±2^53 and every DECIMAL as strings, ISO-8601 timestamps, binary as base64, complex values as JSON.
// HiveServer2 sends columns (one typed array per column), complex values as Hive-style text; Trino sends
// rows of JSON with a type signature per column. Pure functions: the unit tests drive them without servers.
import type { SqlColumn } from '../../domain/sql';

// ---- numbers ---------------------------------------------------------------------------------------

const LIMIT = 2n ** 53n;
const INTEGER = /^-?\d+$/;
const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

/** An integer as a number while exact (|v| ≤ 2^53), else its decimal string. */
export function exactBigInt(v: bigint): number | string {
  return v >= -LIMIT && v <= LIMIT ? Number(v) : v.toString();
}

/** Decimal integer text as a number while exact, else unchanged. */
export function exactInteger(text: string): number | string {
  return text.length - (text[0] === '-' ? 1 : 0) <= 15 ? Number(text) : exactBigInt(BigInt(text));
}

/** A big-endian signed 64-bit integer (thrift's i64) as a number while exact, else a decimal string. */
export function int64Value(buf: Buffer, offset: number): number | string {
  const hi = buf.readInt32BE(offset);
  // |hi| < 2^21: the value is below 2^53 in magnitude, the double arithmetic is exact.
  if (hi >= -0x200000 && hi < 0x200000) return hi * 0x100000000 + buf.readUInt32BE(offset + 4);
  return exactBigInt(buf.readBigInt64BE(offset));
}

/** Doubles as numbers; NaN and the infinities (no JSON form) as 'NaN', 'Infinity', '-Infinity'. */
export const floatValue = (v: number): number | string => (Number.isFinite(v) ? v : String(v));

/** Sign, significant digits and exponent: equal keys mean equal decimal values ('1.50' and '1.5e0'). */
function decimalKey(text: string): string {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(text);
  if (!m) return text;
  const all = m[2] + (m[3] ?? '');
  const digits = all.replace(/^0+/, '');
  const exp = Number(m[4] ?? 0) + m[2].length - (all.length - digits.length);
  const sig = digits.replace(/0+$/, '');
  return sig ? `${m[1]}${sig}e${exp}` : '0';
}

/** Numeric text (Hive-style, unknown type) as a number when the double holds it exactly, else the text. */
export function exactNumber(text: string): number | string {
  if (INTEGER.test(text)) return exactInteger(text);
  const n = Number(text);
  return Number.isFinite(n) && decimalKey(String(n)) === decimalKey(text) ? n : text;
}

// ---- dates and times ---------------------------------------------------------------------------------

/** 'YYYY-MM-DD HH:MM:SS[.f…]' → 'YYYY-MM-DDTHH:MM:SS[.f…]'; anything else unchanged. */
export const isoTimestamp = (text: string): string =>
  text.length > 10 && text[10] === ' ' ? `${text.slice(0, 10)}T${text.slice(11)}` : text;

const OFFSET = /^[+-]\d{2}:\d{2}$/;
const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** Minutes the zone is ahead of UTC at the instant. */
function zoneOffset(zone: string, epochMs: number): number {
  let f = zoneFormats.get(zone);
  if (!f) {
    const n = 'numeric';
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: n,
      month: n,
      day: n,
      hour: n,
      minute: n,
      second: n,
    });
    zoneFormats.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(epochMs)) p[part.type] = Number(part.value);
  const wall = wallClock(p.year, p.month, p.day, p.hour, p.minute, p.second);
  return Math.round((wall - Math.floor(epochMs / 1000) * 1000) / 60_000);
}

function wallClock(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d); // years below 100 are not 19xx here, unlike Date.UTC
  return t.setUTCHours(h, mi, s, 0);
}

const formatOffset = (min: number): string =>
  `${min < 0 ? '-' : '+'}${String(Math.floor(Math.abs(min) / 60)).padStart(2, '0')}:${String(Math.abs(min) % 60).padStart(2, '0')}`;

/** Trino's 'YYYY-MM-DD HH:MM:SS[.f…] <zone>' (zone id or offset) → ISO-8601 with the offset at that time. */
export function zonedTimestamp(text: string): string {
  const space = text.lastIndexOf(' ');
  if (space <= 10) return isoTimestamp(text);
  const local = isoTimestamp(text.slice(0, space));
  const zone = text.slice(space + 1);
  if (OFFSET.test(zone)) return local + zone;
  if (zone === 'UTC' || zone === 'Z' || zone === 'GMT') return `${local}Z`;
  const m = /^(-?\d+)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)/.exec(local);
  if (!m) return text;
  try {
    const wall = wallClock(+m[1], +m[2], +m[3], +m[4], +m[5], +m[6]);
    const guess = zoneOffset(zone, wall);
    return local + formatOffset(zoneOffset(zone, wall - guess * 60_000));
  } catch {
    return text; // a zone this runtime does not know
  }
}

// ---- column descriptions ---------------------------------------------------------------------------

export const column = (
  name: string,
  type: string,
  index: number,
  precision = 0,
  scale = 0,
  comment?: string | null,
): SqlColumn => ({
  name,
  type,
  index,
  precision,
  scale,
  comment: comment || null,
});

/** obj[key] = value, also for the key `__proto__` (an engine's data must not reach a prototype). */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

// ---- Hive-style text of ARRAY, MAP and STRUCT values ------------------------------------------------
// Spark's Thrift Server prints them like JSON, loosely: strings are quoted without escaping (one may hold `"`,
// `,` or `}`), map keys that are not strings are bare (`{1:"a"}`), and dates, timestamps, intervals and binary
// are bare words. So a string or bare word may end at several places: each takes its first end that lets the
// rest parse, trying the first ends first (a depth-first search over the tokens' ends, bounded).

const BACKTRACK = new Error('hive text: backtrack');
const MAX_ATTEMPTS = 64;
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

// ---- Trino results ----------------------------------------------------------------------------------

export interface TrinoTypeSignature {
  rawType: string;
  arguments: { kind: string; value: unknown }[];
}
export interface TrinoColumn {
  name: string;
  type: string;
  typeSignature?: TrinoTypeSignature;
}
type Convert = (v: unknown) => unknown;

const signature = (c: TrinoColumn): TrinoTypeSignature =>
  c.typeSignature ?? { rawType: c.type.replace(/\(.*$/, ''), arguments: [] };

export function trinoColumns(cols: TrinoColumn[]): SqlColumn[] {
  return cols.map((c, i) => {
    const sig = signature(c);
    const arg = (k: number) => (sig.rawType === 'decimal' ? Number(sig.arguments[k]?.value ?? 0) : 0);
    return column(c.name, sig.rawType.toUpperCase(), i + 1, arg(0), arg(1));
  });
}

/** Trino's rows (parsed by parseExactJson) made exact in place; rows of types that need nothing are left alone. */
export function trinoRowConverter(cols: TrinoColumn[]): (rows: unknown[][]) => unknown[][] {
  const convs = cols.map((c) => converter(signature(c)));
  const at = convs.flatMap((f, i) => (f ? [i] : []));
  if (!at.length) return (rows) => rows;
  return (rows) => {
    for (const row of rows) for (const i of at) row[i] = (convs[i] as Convert)(row[i]);
    return rows;
  };
}

function converter(sig: TrinoTypeSignature): Convert | undefined {
  const types = sig.arguments.filter((a) => a.kind === 'TYPE').map((a) => a.value as TrinoTypeSignature);
  switch (sig.rawType) {
    case 'bigint':
      return (v) => (typeof v === 'string' ? exactInteger(v) : v);
    case 'timestamp':
      return (v) => (typeof v === 'string' ? isoTimestamp(v) : v);
    case 'timestamp with time zone':
      return (v) => (typeof v === 'string' ? zonedTimestamp(v) : v);
    case 'array': {
      const e = converter(types[0]);
      return e && ((v) => (Array.isArray(v) ? v.map((x) => e(x)) : v));
    }
    case 'map':
      return mapConverter(converter(types[0]), converter(types[1]));
    case 'row':
      return rowConverter(sig);
    default:
      return undefined; // numbers, strings (decimal, date, varchar, base64 varbinary), booleans: exact as sent
  }
}

function mapConverter(key: Convert | undefined, value: Convert | undefined): Convert | undefined {
  if (!key && !value) return undefined;
  return (v) => {
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setKey(out, key ? String(key(k)) : k, value ? value(x) : x);
    return out;
  };
}

/** ROW values come as positional arrays: objects keyed by field name (field0, field1… when unnamed). */
function rowConverter(sig: TrinoTypeSignature): Convert {
  const fields = sig.arguments.map(
    (a) => a.value as { fieldName?: { name: string } | null; typeSignature: TrinoTypeSignature },
  );
  const names = fields.map((f, i) => f.fieldName?.name ?? `field${i}`);
  const convs = fields.map((f) => converter(f.typeSignature));
  return (v) => {
    if (!Array.isArray(v)) return v;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) setKey(out, names[i], convs[i] ? (convs[i] as Convert)(v[i]) : v[i]);
    return out;
  };
}

// Only integers of 16 digits or more can lose precision in JSON.parse (doubles come in Java's shortest
// round-trip form, decimals as strings): such tokens outside strings are quoted first, and the bigint
// converter reads them back exactly. The common case, no 16-digit run at all, is plain JSON.parse.
const LONG_DIGITS = /\d{16}/;
const STRING_OR_LONG_INTEGER = /"[^"\\]*(?:\\.[^"\\]*)*"|(?<![\w.+-])-?\d{16,}(?![\w.])/g;

/** JSON.parse, with integers of 16 digits or more as their decimal strings. */
export function parseExactJson(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  return JSON.parse(text.replace(STRING_OR_LONG_INTEGER, (m) => (m[0] === '"' ? m : `"${m}"`)));
}
