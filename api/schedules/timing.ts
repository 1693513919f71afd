// When a schedule runs: its cron expression and its optional window [startTime, endTime).
import { CronExpressionParser } from 'cron-parser';
import { conflict } from '../errors';

/** Standard five-field cron (minute hour day-of-month month day-of-week), or a Temporal @ shorthand. */
export function checkCron(cron: string): string {
  const c = cron.trim().replace(/\s+/g, ' ');
  if (/^@(yearly|annually|monthly|weekly|daily|hourly)$/.test(c)) return c;
  if (/^@every\s+\d+[smhd]$/.test(c)) return c;
  const fields = c.split(' ');
  if (fields.length !== 5) {
    throw conflict(
      `cron: '${cron}' has ${fields.length} fields; a cron expression has 5: minute hour day-of-month month day-of-week (e.g. '*/5 * * * *')`,
    );
  }
  try {
    CronExpressionParser.parse(c);
  } catch (e) {
    throw conflict(`cron: '${cron}' is not a valid cron expression: ${(e as Error).message}`);
  }
  return c;
}

/** '' clears an optional time in an update; otherwise epoch milliseconds. */
export function timeOf(field: string, s: string | undefined): number | null | undefined {
  if (s === undefined) return undefined;
  if (s === '') return null;
  if (!/^[0-9]{1,15}$/.test(s)) throw conflict(`${field}: '${s}' must be epoch milliseconds`);
  return Number(s);
}

/** A window must leave room for at least one run. */
export function checkWindow(startTime: number | undefined, endTime: number | undefined, now: number): void {
  if (endTime !== undefined && endTime <= now)
    throw conflict(`endTime: ${endTime} is in the past; no run could happen`);
  if (startTime !== undefined && endTime !== undefined && endTime <= startTime)
    throw conflict('endTime: must be after startTime');
}
