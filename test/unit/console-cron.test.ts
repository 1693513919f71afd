// The console's cron describer (console/src/pages/schedules-cron.ts): the crons the API accepts, in words.
import { describe, expect, it } from 'vitest';
import { describeCron } from '../../console/src/pages/schedules-cron';

describe('describeCron', () => {
  it.each([
    ['0 3 * * 1', 'At 03:00 UTC, on Monday'],
    ['30 4 * * *', 'At 04:30 UTC, every day'],
    ['*/5 * * * *', 'Every 5 minutes'],
    ['* * * * *', 'Every minute'],
    ['0 * * * *', 'At minute 0 of every hour'],
    ['0 3 * * 1-5', 'At 03:00 UTC, on Monday through Friday'],
    ['0 3 * * mon,WED', 'At 03:00 UTC, on Monday and Wednesday'],
    ['15 10,14 * * *', 'At 10:15 and 14:15 UTC, every day'],
    ['0 9-17 * * *', 'At minute 0, from 09:00 through 17:59 UTC'],
    ['0 */2 * * *', 'At minute 0, every 2 hours'],
    ['0 0 1 * *', 'At 00:00 UTC, on day 1 of the month'],
    ['0 0 1,15 1-3 *', 'At 00:00 UTC, on days 1 and 15 of the month, in January through March'],
    ['0 0 1 * 0', 'At 00:00 UTC, on day 1 of the month or on Sunday'],
    ['0 6 * * 7', 'At 06:00 UTC, on Sunday'],
    ['10-20/5 * * * *', 'Minutes every 5 minutes from 10 through 20'],
    ['@daily', 'Every day at 00:00 UTC'],
    ['@weekly', 'Every Sunday at 00:00 UTC'],
    ['@every 30m', 'Every 30 minutes'],
    ['@every 1h', 'Every hour'],
  ])('%s → %s', (cron, words) => expect(describeCron(cron)).toBe(words));

  it('gives undefined for what it does not read', () => {
    for (const c of ['0 3 * *', '61 * * * *', '0 3 L * *', '0 3 * * 1#2', '@often', '0 5-3 * * *'])
      expect(describeCron(c)).toBeUndefined();
  });
});
