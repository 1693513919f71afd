// Trino's pages with their rows left as the JSON text Trino sent, for a caller that sends rows on as JSON (the
// API's POST /sql/execute): a page's `data` array is found and split into rows by a scan of the text, the rest
// of the page parsed as before. The API then neither parses the rows nor serialises them again (it did both for
// every page: about 100 ms of its CPU a 100,000-row result). The rows go out as Trino wrote them, which is the
// JSON of the same values as the parsed path's, as long as nothing needs converting: columns whose values
// trino-values.ts changes (timestamps, ROW objects, nested ones) and pages with integers of 16 digits or more
// (a big BIGINT becomes a string there) take the parsed path.
import type { JsonRows } from './types';
import type { TrinoColumn, TrinoTypeSignature } from './trino-values';

/** A page's `data` as text: row i is text[starts[i], ends[i]). */
export class TrinoRowsText implements JsonRows {
  constructor(
    private readonly text: string,
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
    readonly count: number,
  ) {}

  /** The first `n` rows. */
  limit(n: number): TrinoRowsText {
    return n >= this.count ? this : new TrinoRowsText(this.text, this.starts, this.ends, Math.max(0, n));
  }

  encode(from: number, to: number, head: string, tail: string): Buffer {
    return Buffer.from(head + this.text.slice(this.starts[from], this.ends[to - 1]) + tail);
  }

  /** The whole array's text. */
  get json(): string {
    return this.count ? `[${this.text.slice(this.starts[0], this.ends[this.count - 1])}]` : '[]';
  }
}

const LONG_DIGITS = /\d{16}/;
/** Types whose values trino-values.ts rewrites (beyond BIGINT's big values). */
const REWRITTEN = new Set(['timestamp', 'timestamp with time zone', 'row']);

/** Whether rows of these columns go out as sent: no column of a type whose values are rewritten, at any depth. */
export function rowsPassThrough(cols: TrinoColumn[]): boolean {
  const plain = (sig: TrinoTypeSignature | undefined): boolean =>
    !sig ||
    (!REWRITTEN.has(sig.rawType) &&
      sig.arguments.every((a) => a.kind !== 'TYPE' || plain(a.value as TrinoTypeSignature)));
  return cols.every((c) => (c.typeSignature ? plain(c.typeSignature) : !REWRITTEN.has(c.type.replace(/\(.*$/, ''))));
}

/**
 * The page's text with `data` replaced by null, and the data's rows as text; undefined when the page has no
 * data array, the rows hold a run of 16 digits (a BIGINT that may need its exact string), or the scan finds the
 * text malformed (JSON.parse of the whole page then says how).
 */
export function splitPage(text: string): { rest: string; rows: TrinoRowsText } | undefined {
  try {
    return split(text);
  } catch {
    return undefined;
  }
}

function split(text: string): { rest: string; rows: TrinoRowsText } | undefined {
  const key = findDataKey(text);
  if (key < 0) return undefined;
  const s = new Scan(text, key);
  s.space();
  if (text.charCodeAt(s.i) !== 0x5b) return undefined; // '['
  const open = s.i++;
  let starts: Int32Array = new Int32Array(1024);
  let ends: Int32Array = new Int32Array(1024);
  let n = 0;
  s.space();
  if (text.charCodeAt(s.i) === 0x5d) s.i++;
  else
    for (;;) {
      s.space();
      if (n === starts.length) {
        starts = grow(starts);
        ends = grow(ends);
      }
      starts[n] = s.i;
      s.value();
      ends[n++] = s.i;
      s.space();
      const c = text.charCodeAt(s.i++);
      if (c === 0x5d) break; // ']'
      if (c !== 0x2c) throw new SyntaxError('Trino page: malformed data array');
    }
  const close = s.i;
  if (LONG_DIGITS.test(text.slice(open, close))) return undefined;
  return {
    rest: `${text.slice(0, open)}null${text.slice(close)}`,
    rows: new TrinoRowsText(text, starts, ends, n),
  };
}

function grow(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/** Where the value of the top-level key "data" starts, or -1. */
function findDataKey(text: string): number {
  const s = new Scan(text, 0);
  s.space();
  if (text.charCodeAt(s.i++) !== 0x7b) return -1; // '{'
  for (;;) {
    s.space();
    if (text.charCodeAt(s.i) !== 0x22) return -1; // '}' or malformed
    const k = s.i;
    s.string();
    const isData = s.i - k === 6 && text.startsWith('"data"', k);
    s.space();
    if (text.charCodeAt(s.i++) !== 0x3a) return -1; // ':'
    if (isData) return s.i;
    s.space();
    s.value();
    s.space();
    if (text.charCodeAt(s.i++) !== 0x2c) return -1; // ','
  }
}

/** Skips JSON values in a text assumed well formed (JSON.parse of the rest still checks the page). */
class Scan {
  constructor(
    private readonly t: string,
    public i: number,
  ) {}

  space() {
    let c = this.t.charCodeAt(this.i);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = this.t.charCodeAt(++this.i);
  }

  string() {
    const t = this.t;
    let j = this.i + 1;
    for (;;) {
      const q = t.indexOf('"', j);
      if (q < 0) throw new SyntaxError('Trino page: unterminated string');
      let b = q - 1;
      while (t.charCodeAt(b) === 0x5c) b--; // backslashes before the quote: an odd number escapes it
      j = q + 1;
      if ((q - 1 - b) % 2 === 0) break;
    }
    this.i = j;
  }

  value() {
    const t = this.t;
    const c = t.charCodeAt(this.i);
    if (c === 0x22) return this.string();
    if (c === 0x5b || c === 0x7b) {
      let depth = 0;
      for (;;) {
        const d = t.charCodeAt(this.i);
        if (d === 0x22) {
          this.string();
          continue;
        }
        this.i++;
        if (d === 0x5b || d === 0x7b) depth++;
        else if (d === 0x5d || d === 0x7d) {
          if (--depth === 0) return;
        } else if (Number.isNaN(d)) throw new SyntaxError('Trino page: unterminated value');
      }
    }
    // number, true, false, null
    let d = c;
    while (d !== 0x2c && d !== 0x5d && d !== 0x7d && d !== 0x20 && d !== 0x0a && d !== 0x0d && !Number.isNaN(d))
      d = t.charCodeAt(++this.i);
  }
}
