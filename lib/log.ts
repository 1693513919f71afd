// One small structured logger. Two formats, chosen by LOG_FORMAT:
//   json  — one JSON object per line (level, time, component, msg, the ids, then the other fields),
//           for log collectors; the images and the Helm chart set it.
//   human — `time LEVEL [component] msg key=value ...`, for a terminal (the default, the dev stack).
// Values under secret-bearing keys, and passwords inside URLs, are never printed, in either format.
// A line written inside a traced request or activity carries the trace's id (`traceId`, lib/tracing.ts).
import { isSpanContextValid, trace } from '@opentelemetry/api';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type Level = keyof typeof LEVELS;
export type LogFormat = 'json' | 'human';
export type LogFields = Record<string, unknown>;

/** Ids that tie a line to a job, group, schedule, execution, cluster or driver: always first after msg. */
export const ID_FIELDS = [
  'jobId',
  'groupId',
  'scheduleId',
  'jobInstanceId',
  'clusterName',
  'driverId',
  'traceId',
] as const;
const CORE_KEYS = new Set(['time', 'level', 'component', 'msg']);

const REDACTED = '***';
// Keys are compared lowercased without `_`, `-` or `.`, so AWS_SECRET_ACCESS_KEY, client-key and
// clientKeyPassphrase all match. Anything ending in "key" counts (clientKey, SECRET_KEY, sshKey):
// an over-redacted cache key costs less than a printed private key.
const SECRET_PARTS = [
  'password',
  'passwd',
  'secret',
  'token',
  'passphrase',
  'credential',
  'authorization',
  'cookie',
  'accesskey',
  'privatekey',
  'apikey',
];
const CERT_KEYS = new Set(['cacert', 'clientcert']);

export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_.]/g, '');
  return k.endsWith('key') || CERT_KEYS.has(k) || SECRET_PARTS.some((p) => k.includes(p));
}

/** `scheme://user:password@host` → `scheme://user:***@host`, anywhere in a string. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s:@/]*:)[^\s@/]+@/gi;
const scrubString = (s: string) => s.replace(URL_PASSWORD, `$1${REDACTED}@`);

const MAX_DEPTH = 8;

/**
 * A copy of `value` safe to print: secret-bearing keys replaced by `***` at any depth, URL passwords
 * masked in every string, errors as { name, message, stack, ... }, cycles and very deep nesting cut.
 */
export function redact(value: unknown): unknown {
  return redactValue(value, 0, new WeakSet());
}

function redactValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return scrubString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return `[${typeof value}]`;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[too deep]';
  seen.add(value);
  try {
    const next = (v: unknown) => redactValue(v, depth + 1, seen);
    if (Array.isArray(value)) return value.map(next);
    if (value instanceof Map)
      return redactEntries(
        [...value.entries()].map(([k, v]) => [String(k), v]),
        next,
      );
    if (value instanceof Set) return [...value].map(next);
    if (value instanceof Error) {
      const own = redactEntries(Object.entries(value), next);
      const cause = (value as { cause?: unknown }).cause;
      return {
        name: value.name,
        message: scrubString(value.message),
        ...own,
        ...(cause !== undefined ? { cause: next(cause) } : {}),
        ...(value.stack ? { stack: scrubString(value.stack) } : {}),
      };
    }
    return redactEntries(Object.entries(value), next);
  } finally {
    seen.delete(value);
  }
}

function redactEntries(entries: [string, unknown][], next: (v: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) out[k] = isSecretKey(k) ? REDACTED : next(v);
  return out;
}

// ───────────────────────────── settings ─────────────────────────────

const levelFrom = (s: string | undefined): number => (s && s in LEVELS ? LEVELS[s as Level] : LEVELS.info);
const formatFrom = (s: string | undefined): LogFormat => (s === 'json' ? 'json' : 'human');

let threshold = levelFrom(process.env.LOG_LEVEL);
let format = formatFrom(process.env.LOG_FORMAT);
if (process.env.LOG_FORMAT && process.env.LOG_FORMAT !== 'json' && process.env.LOG_FORMAT !== 'human') {
  process.stderr.write(`log: unknown LOG_FORMAT '${process.env.LOG_FORMAT}' (json or human); using human\n`);
}

export const setLogLevel = (l: Level): void => {
  threshold = LEVELS[l];
};
export const setLogFormat = (f: LogFormat): void => {
  format = f;
};
/** The settings in force, for a thread that logs as this one does (api/connect/gateway-thread.ts). */
export const logSettings = (): { level: Level; format: LogFormat } => ({
  level: (Object.keys(LEVELS) as Level[]).find((l) => LEVELS[l] === threshold) ?? 'info',
  format,
});

// ───────────────────────────── formatting ─────────────────────────────

/** The fields of a line, ids first, none shadowing the core keys (a field `msg` becomes `field.msg`). */
function orderedFields(fields: LogFields): [string, unknown][] {
  const safe = redact(fields) as LogFields;
  const ids = ID_FIELDS.filter((k) => safe[k] !== undefined).map((k): [string, unknown] => [k, safe[k]]);
  const rest = Object.entries(safe)
    .filter(([k, v]) => v !== undefined && !(ID_FIELDS as readonly string[]).includes(k))
    .map(([k, v]): [string, unknown] => [CORE_KEYS.has(k) ? `field.${k}` : k, v]);
  return [...ids, ...rest];
}

/** One JSON line. */
export function formatJson(time: Date, level: Level, component: string, msg: string, fields: LogFields = {}): string {
  const line: Record<string, unknown> = { time: time.toISOString(), level, component, msg: scrubString(msg) };
  for (const [k, v] of orderedFields(fields)) line[k] = v;
  return JSON.stringify(line);
}

const BARE = /^[^\s"=]+$/;
const humanValue = (v: unknown): string => {
  if (typeof v === 'string') return BARE.test(v) ? v : JSON.stringify(v);
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

/** One line (plus the indented stack of an error field) for people. */
export function formatHuman(time: Date, level: Level, component: string, msg: string, fields: LogFields = {}): string {
  const parts = [`${time.toISOString()} ${level.toUpperCase().padEnd(5)} [${component}] ${scrubString(msg)}`];
  const stacks: string[] = [];
  for (const [k, v] of orderedFields(fields)) {
    const err = v as { name?: unknown; message?: unknown; stack?: unknown } | null;
    if (err && typeof err === 'object' && typeof err.message === 'string' && typeof err.stack === 'string') {
      parts.push(`${k}=${humanValue(err.message)}`);
      stacks.push(err.stack.replace(/^/gm, '    '));
    } else {
      parts.push(`${k}=${humanValue(v)}`);
    }
  }
  return [parts.join(' '), ...stacks].join('\n');
}

/** The trace id of the active span (lib/tracing.ts), when tracing is on and a span is active. */
function traceIdNow(): string | undefined {
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && isSpanContextValid(ctx) ? ctx.traceId : undefined;
}

function emit(level: Level, component: string, msg: string, fields?: LogFields): void {
  if (LEVELS[level] < threshold) return;
  let line: string;
  try {
    const traceId = traceIdNow();
    const all = traceId ? { ...fields, traceId } : (fields ?? {});
    line = (format === 'json' ? formatJson : formatHuman)(new Date(), level, component, msg, all);
  } catch (e) {
    // A log call must never throw into the code that made it.
    line = JSON.stringify({
      time: new Date().toISOString(),
      level,
      component,
      msg: scrubString(msg),
      logError: String(e),
    });
  }
  sink(level, line);
}

/** Where lines go: stdout, warnings and errors to stderr. Tests send them through the console instead. */
export type LogSink = (level: Level, line: string) => void;
const stdSink: LogSink = (level, line) =>
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(line + '\n');
let sink: LogSink = stdSink;
export const setLogSink = (s: LogSink | undefined): void => {
  sink = s ?? stdSink;
};

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export const logger = (component: string): Logger => ({
  debug: (msg, f) => emit('debug', component, msg, f),
  info: (msg, f) => emit('info', component, msg, f),
  warn: (msg, f) => emit('warn', component, msg, f),
  error: (msg, f) => emit('error', component, msg, f),
});
