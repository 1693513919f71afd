// Trino's results as exact values (values.ts): rows of JSON with a type signature per column, the JSON
// parsed with big integers kept exact.
import type { SqlColumn } from '../../domain/sql';
import { column, exactInteger, isoTimestamp, setKey, zonedTimestamp } from './values';

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
