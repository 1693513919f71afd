// A cron expression in words, for the schedules pages: the five fields `minute hour day-of-month month
// day-of-week` and the @ shorthands the API accepts (@yearly … @hourly, `@every <n><s|m|h|d>`), evaluated in UTC
// as the service evaluates them. Anything it does not understand gives undefined: the page shows the raw cron.

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
].concat(['November', 'December']);
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** One comma-separated part of a field: `*`, `n`, `a-b`, each optionally `/step`. */
interface Part {
  from: number;
  to: number;
  step: number;
  /** `*` (or `*` with a step): the whole range. */
  any: boolean;
}

interface FieldSpec {
  min: number;
  max: number;
  names?: string[];
  /** The names' numbering starts here (months: 1). */
  nameBase?: number;
}

const FIELDS: Record<'minute' | 'hour' | 'dom' | 'month' | 'dow', FieldSpec> = {
  minute: { min: 0, max: 59 },
  hour: { min: 0, max: 23 },
  dom: { min: 1, max: 31 },
  month: { min: 1, max: 12, names: MONTHS, nameBase: 1 },
  dow: { min: 0, max: 7, names: DAYS, nameBase: 0 },
};

function value(s: string, f: FieldSpec): number | undefined {
  if (/^\d+$/.test(s)) {
    const n = Number(s);
    return n >= f.min && n <= f.max ? n : undefined;
  }
  const i = f.names?.findIndex((n) => n.slice(0, 3).toLowerCase() === s.toLowerCase()) ?? -1;
  return i >= 0 ? i + (f.nameBase ?? 0) : undefined;
}

function parseField(text: string, f: FieldSpec): Part[] | undefined {
  const parts: Part[] = [];
  for (const raw of text.split(',')) {
    const m = /^(\*|\?|[A-Za-z0-9]+)(?:-([A-Za-z0-9]+))?(?:\/(\d+))?$/.exec(raw);
    if (!m) return undefined;
    const step = m[3] ? Number(m[3]) : 1;
    if (step < 1) return undefined;
    if (m[1] === '*' || m[1] === '?') {
      if (m[2]) return undefined;
      parts.push({ from: f.min, to: f.max, step, any: true });
      continue;
    }
    const from = value(m[1], f);
    const to = m[2] !== undefined ? value(m[2], f) : m[3] ? f.max : from;
    if (from === undefined || to === undefined || to < from) return undefined;
    parts.push({ from, to, step, any: false });
  }
  return parts;
}

/** "a", "a and b", "a, b and c". */
export function listText(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

const two = (n: number) => String(n).padStart(2, '0');
const isSingle = (p: Part) => !p.any && p.from === p.to;
const everyN = (n: number, unit: string) => (n === 1 ? `every ${unit}` : `every ${n} ${unit}s`);

/** Each part in words, given how one value reads. */
function partsText(parts: Part[], name: (n: number) => string, unit: string): string {
  return listText(
    parts.map((p) => {
      if (p.any) return everyN(p.step, unit);
      if (p.from === p.to) return name(p.from);
      const range = `${name(p.from)} through ${name(p.to)}`;
      return p.step === 1 ? range : `${everyN(p.step, unit)} from ${range}`;
    }),
  );
}

const dayName = (n: number) => DAYS[n % 7];
const monthName = (n: number) => MONTHS[n - 1];

function timeText(minute: Part[], hour: Part[]): string {
  const allAny = (ps: Part[]) => ps.length === 1 && ps[0].any;
  if (minute.every(isSingle) && hour.every(isSingle) && minute.length * hour.length <= 6) {
    const times = hour.flatMap((h) => minute.map((m) => `${two(h.from)}:${two(m.from)}`));
    return `At ${listText(times)} UTC`;
  }
  const minutes = allAny(minute)
    ? everyN(minute[0].step, 'minute')
    : minute.every(isSingle)
      ? `At minute${minute.length > 1 ? 's' : ''} ${listText(minute.map((p) => String(p.from)))}`
      : `Minutes ${partsText(minute, String, 'minute')}`;
  const first = minutes.charAt(0).toUpperCase() + minutes.slice(1);
  if (allAny(hour) && hour[0].step === 1) return minute.every(isSingle) ? `${first} of every hour` : first;
  if (allAny(hour)) return `${first}, ${everyN(hour[0].step, 'hour')}`;
  if (hour.length === 1 && hour[0].step === 1 && !isSingle(hour[0]))
    return `${first}, from ${two(hour[0].from)}:00 through ${two(hour[0].to)}:59 UTC`;
  return `${first}, during hour${hour.length > 1 || !isSingle(hour[0]) ? 's' : ''} ${partsText(hour, two, 'hour')} UTC`;
}

function dayText(dom: Part[], month: Part[], dow: Part[]): string {
  const any = (ps: Part[]) => ps.length === 1 && ps[0].any && ps[0].step === 1;
  const bits: string[] = [];
  const days = any(dom)
    ? undefined
    : `on day${dom.every(isSingle) && dom.length === 1 ? '' : 's'} ${partsText(dom, String, 'day')} of the month`;
  const weekdays = any(dow) ? undefined : `on ${partsText(dow, dayName, 'day')}`;
  // Cron runs when either day field matches if both are restricted.
  if (days && weekdays) bits.push(`${days} or ${weekdays}`);
  else if (days ?? weekdays) bits.push((days ?? weekdays)!);
  if (!any(month)) bits.push(`in ${partsText(month, monthName, 'month')}`);
  return bits.length ? bits.join(', ') : 'every day';
}

const SHORTHANDS: Record<string, string> = {
  '@yearly': 'Every year on 1 January at 00:00 UTC',
  '@annually': 'Every year on 1 January at 00:00 UTC',
  '@monthly': 'On day 1 of every month at 00:00 UTC',
  '@weekly': 'Every Sunday at 00:00 UTC',
  '@daily': 'Every day at 00:00 UTC',
  '@hourly': 'Every hour, at minute 0',
};
const UNITS: Record<string, string> = { s: 'second', m: 'minute', h: 'hour', d: 'day' };

/** The cron expression in words, or undefined when it is not one this describer reads. */
export function describeCron(cron: string): string | undefined {
  const c = cron.trim().replace(/\s+/g, ' ');
  if (SHORTHANDS[c]) return SHORTHANDS[c];
  const every = /^@every (\d+)([smhd])$/.exec(c);
  if (every) {
    const text = everyN(Number(every[1]), UNITS[every[2]]);
    return text.charAt(0).toUpperCase() + text.slice(1);
  }
  const fields = c.split(' ');
  if (fields.length !== 5) return undefined;
  const [minute, hour, dom, month, dow] = [
    parseField(fields[0], FIELDS.minute),
    parseField(fields[1], FIELDS.hour),
    parseField(fields[2], FIELDS.dom),
    parseField(fields[3], FIELDS.month),
    parseField(fields[4], FIELDS.dow),
  ];
  if (!minute || !hour || !dom || !month || !dow) return undefined;
  const time = timeText(minute, hour);
  const days = dayText(dom, month, dow);
  // "every day" only adds to a time of day ("At 03:00 UTC, every day"), not to "Every 5 minutes".
  return days === 'every day' && !/^At \d/.test(time) ? time : `${time}, ${days}`;
}
