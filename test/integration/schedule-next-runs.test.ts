// GET /schedule/{id} carries the next run times its Temporal Schedule computes (a real Temporal dev server and
// worker; the cron fires on Mondays at 03:00 UTC, so no run happens during the test), only while ENABLED.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, form, startHarness, type Harness } from '../harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

const APP = { pyFiles: [{ name: 'tick.py', content: 'print("tick")\n' }] };

describe('next run times of a schedule', () => {
  it('lists the next Mondays at 03:00 UTC while ENABLED, none while PAUSED, and again once resumed', async () => {
    const r = await call(
      h,
      'POST',
      '/schedule',
      form({ name: 'weekly-next', cron: '0 3 * * 1', language: 'PYTHON', jobClass: 'tick' }, APP),
    );
    expect(r.status).toBe(200);
    const id = r.body.scheduleId as string;
    const before = Date.now();
    const next = await eventually(
      async () => (await call(h, 'GET', `/schedule/${id}`)).body.nextRunTimes as number[] | undefined,
      30_000,
      200,
    );
    expect(next.length).toBe(5);
    for (const [i, t] of next.entries()) {
      const d = new Date(t);
      expect([d.getUTCDay(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()]).toEqual([1, 3, 0, 0]);
      expect(t).toBeGreaterThan(before);
      if (i > 0) expect(t - next[i - 1]).toBe(7 * 24 * 3600_000);
    }
    expect(next[0] - before).toBeLessThanOrEqual(7 * 24 * 3600_000);

    expect((await call(h, 'POST', `/schedule/${id}/pause`)).status).toBe(200);
    const paused = (await call(h, 'GET', `/schedule/${id}`)).body;
    expect(paused.state).toBe('PAUSED');
    expect(paused.nextRunTimes).toBeUndefined();

    expect((await call(h, 'POST', `/schedule/${id}/resume`)).status).toBe(200);
    expect((await call(h, 'GET', `/schedule/${id}`)).body.nextRunTimes).toEqual(next);

    // A changed cron changes the times; the list form does not carry them.
    expect((await call(h, 'PUT', `/schedule/${id}`, form({ cron: '30 4 * * *' }))).status).toBe(200);
    const daily = (await call(h, 'GET', `/schedule/${id}`)).body.nextRunTimes as number[];
    expect(daily.map((t) => [new Date(t).getUTCHours(), new Date(t).getUTCMinutes()])).toEqual(Array(5).fill([4, 30]));
    const list = (await call(h, 'GET', '/schedule')).body;
    expect(list.content.find((s: { id: string }) => s.id === id)).not.toHaveProperty('nextRunTimes');
  });
});
