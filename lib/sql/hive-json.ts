// HiveServer2's result batches straight to JSON text, for a caller that sends rows on as JSON (the API's
// POST /sql/execute): FetchResults' columns are read in place in the received frame, and each row is written
// as the bytes JSON.stringify(hiveRows(...)) would give, without making a value, an array or a string per
// cell. hive-driver's generated code makes an object per BIGINT (and a Buffer for it), a string per text
// value, and hive-values.ts an array per row: a 100,000-row result cost the API about 100 ms of CPU, a third
// of it garbage collection. Plain ASCII text and numbers go byte to byte here; anything else (non-ASCII or
// escaped text, complex values, integers beyond 2^53) takes hive-values.ts's own conversion, so the bytes are
// the same either way (test/unit/hive-json.test.ts compares them).
// Over 300 lines on purpose: the in-place reader and the writer share one layout of a column in the frame.
import { thrift } from 'hive-driver';
import type { SqlColumn } from '../../domain/sql';
import { parseHiveText } from './hive-values';
import { exactBigInt, isoTimestamp } from './values';

const { TCLIService_types: T } = thrift;

/** Thrift's type codes (TType) read here. */
const STOP = 0;
const STRUCT = 12;
const LIST = 15;
const STRING = 11;

/** TColumn's fields, by id, and the bytes a value takes in a list (0: length-prefixed). */
const KINDS = [undefined, 'bool', 'byte', 'i16', 'i32', 'i64', 'double', 'string', 'binary'] as const;
type Kind = Exclude<(typeof KINDS)[number], undefined> | 'none';
const WIDTH: Record<Kind, number> = {
  bool: 1,
  byte: 1,
  i16: 2,
  i32: 4,
  i64: 8,
  double: 8,
  string: 0,
  binary: 0,
  none: 0,
};

/** One column of a batch as it lies in the frame: fixed-width values from `start`, or length-prefixed at `offs`. */
interface RawColumn {
  kind: Kind;
  buf: Buffer;
  count: number;
  start: number;
  /** string and binary: where value i's 4-byte length is; offs[count] is the end of the last. */
  offs?: Int32Array;
  /** Bit i (least significant first) marks row i NULL. */
  nulls: Buffer;
}

/** A FetchResults answer read in place: `results.count` rows in `results.columns`. */
export interface RawFetchResults {
  status: { statusCode: number; errorMessage?: string | null };
  hasMoreRows?: boolean;
  results?: RawRowSet;
}
export interface RawRowSet {
  columns: RawColumn[];
  /** The first column's values (hiveRows' row count). */
  count: number;
}

/** The parts of thrift's TBinaryProtocol and framed transport this reader drives. */
interface Input {
  trans: { inBuf: Buffer; readPos: number };
  readMessageEnd(): unknown;
  readStructBegin(): unknown;
  readStructEnd(): unknown;
  readFieldBegin(): { ftype: number; fid: number };
  readFieldEnd(): unknown;
  readListBegin(): { etype: number; size: number };
  readListEnd(): unknown;
  readBool(): boolean;
  readBinary(): Buffer;
  skip(type: number): void;
}

class Malformed extends Error {
  constructor() {
    super('HiveServer2 sent a malformed FetchResults answer');
  }
}

/** TCLIService_FetchResults_result, read from the message body at the transport's position. */
export function readFetchResults(input: Input): RawFetchResults | undefined {
  let success: RawFetchResults | undefined;
  input.readStructBegin();
  for (let f = input.readFieldBegin(); f.ftype !== STOP; f = input.readFieldBegin()) {
    if (f.fid === 0 && f.ftype === STRUCT) success = readResp(input);
    else input.skip(f.ftype);
    input.readFieldEnd();
  }
  input.readStructEnd();
  return success;
}

function readResp(input: Input): RawFetchResults {
  const out: RawFetchResults = { status: { statusCode: 3 } };
  input.readStructBegin();
  for (let f = input.readFieldBegin(); f.ftype !== STOP; f = input.readFieldBegin()) {
    if (f.fid === 1 && f.ftype === STRUCT) {
      const s = new T.TStatus();
      s.read(input);
      out.status = s as RawFetchResults['status'];
    } else if (f.fid === 2 && f.ftype === 2) out.hasMoreRows = input.readBool();
    else if (f.fid === 3 && f.ftype === STRUCT) out.results = readRowSet(input);
    else input.skip(f.ftype);
    input.readFieldEnd();
  }
  input.readStructEnd();
  return out;
}

function readRowSet(input: Input): RawRowSet {
  const columns: RawColumn[] = [];
  input.readStructBegin();
  for (let f = input.readFieldBegin(); f.ftype !== STOP; f = input.readFieldBegin()) {
    if (f.fid === 3 && f.ftype === LIST) {
      const { etype, size } = input.readListBegin();
      if (etype !== STRUCT) throw new Malformed();
      for (let i = 0; i < size; i++) columns.push(readColumn(input));
      input.readListEnd();
    } else input.skip(f.ftype); // startRowOffset, and `rows` (empty: results come in columns)
    input.readFieldEnd();
  }
  input.readStructEnd();
  return { columns, count: columns.length ? columns[0].count : 0 };
}

/** A TColumn: a union of one TXxxColumn { values: list, nulls: binary }. */
function readColumn(input: Input): RawColumn {
  const t = input.trans;
  let col: RawColumn = { kind: 'none', buf: t.inBuf, count: 0, start: 0, nulls: Buffer.alloc(0) };
  input.readStructBegin();
  for (let f = input.readFieldBegin(); f.ftype !== STOP; f = input.readFieldBegin()) {
    const kind = KINDS[f.fid];
    if (!kind || f.ftype !== STRUCT) {
      input.skip(f.ftype);
      input.readFieldEnd();
      continue;
    }
    col = { kind, buf: t.inBuf, count: 0, start: 0, nulls: Buffer.alloc(0) };
    input.readStructBegin();
    for (let g = input.readFieldBegin(); g.ftype !== STOP; g = input.readFieldBegin()) {
      if (g.fid === 1 && g.ftype === LIST) {
        const { size } = input.readListBegin();
        if (size < 0) throw new Malformed();
        col.count = size;
        col.start = t.readPos;
        if (WIDTH[kind]) t.readPos += size * WIDTH[kind];
        else col.offs = lengthPrefixed(t.inBuf, t.readPos, size);
        if (WIDTH[kind] === 0) t.readPos = col.offs![size];
        if (t.readPos > t.inBuf.length) throw new Malformed();
        input.readListEnd();
      } else if (g.fid === 2 && g.ftype === STRING) col.nulls = input.readBinary();
      else input.skip(g.ftype);
      input.readFieldEnd();
    }
    input.readStructEnd();
    input.readFieldEnd();
  }
  input.readStructEnd();
  return col;
}

function lengthPrefixed(buf: Buffer, pos: number, size: number): Int32Array {
  if (size > (buf.length - pos) / 4) throw new Malformed(); // each value takes 4 bytes at least
  const offs = new Int32Array(size + 1);
  for (let i = 0; i < size; i++) {
    if (pos + 4 > buf.length) throw new Malformed();
    offs[i] = pos;
    const len = buf.readInt32BE(pos);
    if (len < 0) throw new Malformed();
    pos += 4 + len;
  }
  if (pos > buf.length) throw new Malformed();
  offs[size] = pos;
  return offs;
}

// ---- JSON text ---------------------------------------------------------------------------------------

const COMPLEX = new Set(['ARRAY', 'MAP', 'STRUCT', 'UNIONTYPE']);
const TIMESTAMPS = new Set(['TIMESTAMP', 'TIMESTAMP WITH LOCAL TIME ZONE']);
const NULL = Buffer.from('null');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

/** How a text column's value becomes JSON: as it is, as an ISO timestamp, or parsed as Hive's complex text. */
const PLAIN = 0;
const TIMESTAMP = 1;
const COMPLEX_TEXT = 2;
type Text = typeof PLAIN | typeof TIMESTAMP | typeof COMPLEX_TEXT;

/** Grows as it is written: the bytes of one piece of rows. */
class Out {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(size, 64));
  }
  room(n: number) {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  bytes(b: Buffer) {
    this.room(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }
  text(s: string) {
    this.room(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }
  /** A safe integer's decimal digits. */
  int(n: number) {
    this.room(17);
    const b = this.buf;
    if (n < 0) {
      b[this.pos++] = 0x2d;
      n = -n;
    }
    let digits = 1;
    for (let t = n; t >= 10; t = Math.floor(t / 10)) digits++;
    let p = (this.pos += digits);
    do {
      const q = Math.floor(n / 10);
      b[--p] = 0x30 + (n - q * 10);
      n = q;
    } while (n > 0);
  }
}

/** Rows of a batch as JSON text: `encode(from, to, head, tail)` is head + rows from..to, comma-separated, + tail. */
export class HiveJsonRows {
  private readonly text: (Text | undefined)[];

  constructor(
    types: SqlColumn[],
    private readonly set: RawRowSet,
    /** Rows of the batch taken (the rest is beyond the statement's maxRows). */
    readonly count = set.count,
  ) {
    this.text = set.columns.map((c, i) => {
      const type = types[i]?.type ?? '';
      if (c.kind !== 'string') return undefined;
      return TIMESTAMPS.has(type) ? TIMESTAMP : COMPLEX.has(type) ? COMPLEX_TEXT : PLAIN;
    });
  }

  encode(from: number, to: number, head: string, tail: string): Buffer {
    const cols = this.set.columns;
    const out = new Out(head.length + tail.length + (to - from) * (3 + cols.length * 12));
    out.text(head);
    for (let r = from; r < to; r++) {
      out.room(2);
      if (r > from) out.buf[out.pos++] = 0x2c;
      out.buf[out.pos++] = 0x5b;
      for (let c = 0; c < cols.length; c++) {
        if (c > 0) {
          out.room(1);
          out.buf[out.pos++] = 0x2c;
        }
        this.value(out, cols[c], this.text[c], r);
      }
      out.room(1);
      out.buf[out.pos++] = 0x5d;
    }
    out.text(tail);
    return out.buf.subarray(0, out.pos);
  }

  private value(out: Out, col: RawColumn, text: Text | undefined, r: number) {
    if (r >= col.count || (r >> 3 < col.nulls.length && col.nulls[r >> 3] & (1 << (r & 7)))) return out.bytes(NULL);
    const b = col.buf;
    const at = col.start + r * WIDTH[col.kind];
    switch (col.kind) {
      case 'i64': {
        const hi = b.readInt32BE(at);
        // |hi| < 2^21: below 2^53 in magnitude (values.ts int64Value)
        if (hi >= -0x200000 && hi < 0x200000) return out.int(hi * 0x100000000 + b.readUInt32BE(at + 4));
        return out.text(JSON.stringify(exactBigInt(b.readBigInt64BE(at))));
      }
      case 'i32':
        return out.int(b.readInt32BE(at));
      case 'i16':
        return out.int(b.readInt16BE(at));
      case 'byte':
        return out.int(b.readInt8(at));
      case 'bool':
        return out.bytes(b[at] !== 0 ? TRUE : FALSE);
      case 'double': {
        const d = b.readDoubleBE(at);
        return out.text(Number.isFinite(d) ? String(d) : `"${d}"`);
      }
      case 'binary': {
        const s = col.offs![r] + 4;
        return out.text(`"${b.toString('base64', s, col.offs![r + 1])}"`);
      }
      case 'string':
        return this.string(out, b, col.offs![r] + 4, col.offs![r + 1], text!);
      default:
        return out.bytes(NULL);
    }
  }

  /** Printable ASCII without `"` or `\` goes as it is; anything else as hive-values.ts makes it, stringified. */
  private string(out: Out, b: Buffer, s: number, e: number, text: Text) {
    if (text !== COMPLEX_TEXT) {
      out.room(e - s + 2);
      const o = out.buf;
      const begin = out.pos;
      let p = begin;
      o[p++] = 0x22;
      let i = s;
      for (; i < e; i++) {
        const ch = b[i];
        if (ch < 0x20 || ch > 0x7e || ch === 0x22 || ch === 0x5c) break;
        o[p++] = ch;
      }
      if (i === e) {
        o[p++] = 0x22;
        if (text === TIMESTAMP && e - s > 10 && o[begin + 11] === 0x20) o[begin + 11] = 0x54; // 'T'
        out.pos = p;
        return;
      }
    }
    const v = b.toString('utf8', s, e);
    out.text(JSON.stringify(text === COMPLEX_TEXT ? parseHiveText(v) : text === TIMESTAMP ? isoTimestamp(v) : v));
  }
}
