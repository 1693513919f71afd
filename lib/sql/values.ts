// Exact values and column descriptions shared by both protocols (domain/sql.ts SqlStatementResult): integers
// beyond ±2^53 and every DECIMAL as strings, ISO-8601 timestamps, binary as base64, complex values as JSON.
// Each protocol's own results: hive-values.ts (HiveServer2) and trino-values.ts (Trino). Pure functions: the
// unit tests drive them without servers.
import type { SqlColumn } from '../../domain/sql';

// ---- numbers ---------------------------------------------------------------------------------------

const LIMIT = 2n ** 53n;
const INTEGER = /^-?\d+$/;

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
export function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
