// Scenarios of the console's schedules pages, on one weekly schedule created through the API (it never fires
// during the test): the list and the page show its cron in words and its next run times; pause and resume
// through the buttons; the edit form shows the service's refusal of an invalid cron, then saves a new one;
// delete returns to the list.
import { expect, it } from 'vitest';
import { screenshot } from '../../testkit/browser';
import { form } from '../../testkit/http';
import type { ConsoleContext } from './context';

const SCHEDULE = `console-weekly-${Date.now() % 100000}`;

export function schedulesScenarios(c: ConsoleContext): void {
  it('shows the cron in words and the next runs, pauses, resumes, edits and deletes', async () => {
    const created = await c.api(
      'POST',
      '/schedule',
      form(
        { name: SCHEDULE, cron: '0 3 * * 1', language: 'PYTHON', jobClass: 'tick', args: 'a;b' },
        { pyFiles: [{ name: 'tick.py', content: 'print("tick")\n' }] },
      ),
    );
    expect(created.status).toBe(200);

    const page = await c.open('/schedules');
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: SCHEDULE }) });
    await row.getByText('At 03:00 UTC, on Monday').waitFor();
    await screenshot(page, 'schedules-list');

    await row.getByRole('link', { name: SCHEDULE }).click();
    await page.getByRole('heading', { name: SCHEDULE }).waitFor();
    await page.getByText('At 03:00 UTC, on Monday', { exact: true }).waitFor();
    const next = page.getByRole('list', { name: 'next runs' }).getByRole('listitem');
    await expect.poll(() => next.count(), { timeout: 15_000 }).toBe(5);
    const times = await next.locator('time').evaluateAll((els) => els.map((e) => e.getAttribute('datetime')));
    for (const t of times) expect(new Date(t!).toISOString()).toMatch(/T03:00:00\.000Z$/);
    expect(times.every((t) => new Date(t!).getUTCDay() === 1)).toBe(true);
    await screenshot(page, 'schedule-page');

    const header = page.locator('.page-header');
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await header.getByText('PAUSED', { exact: true }).waitFor({ timeout: 15_000 });
    await page.getByText('None while paused.').waitFor();
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await header.getByText('ENABLED', { exact: true }).waitFor({ timeout: 15_000 });
    await expect.poll(() => next.count(), { timeout: 15_000 }).toBe(5);

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Edit ${SCHEDULE}` });
    const cron = dialog.getByLabel('Cron');
    expect(await cron.inputValue()).toBe('0 3 * * 1');
    await cron.fill('61 3 * * 1');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    // The service's own message, above the form and at the field.
    await dialog
      .getByRole('alert')
      .getByText(/is not a valid cron expression/)
      .waitFor({ timeout: 15_000 });
    expect(await cron.getAttribute('aria-invalid')).toBe('true');
    await cron.fill('30 4 * * *');
    await dialog.getByText('At 04:30 UTC, every day').waitFor();
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 15_000 });
    await page.getByText('At 04:30 UTC, every day', { exact: true }).waitFor({ timeout: 15_000 });
    const s = (await c.api('GET', `/schedule/${created.body.scheduleId}`)).body;
    expect(s).toMatchObject({ cron: '30 4 * * *', args: ['a', 'b'], state: 'ENABLED' });

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForURL(/#\/schedules$/, { timeout: 30_000 });
    await page.getByText(/\d+ in all/).waitFor();
    expect(await page.getByRole('link', { name: SCHEDULE }).count()).toBe(0);
    expect((await c.api('GET', `/schedule/${created.body.scheduleId}`)).status).toBe(404);
    await page.context().close();
  });

  it('creates a schedule through the form, checking the cron as it is typed', async () => {
    const page = await c.open('/schedules');
    await page.getByRole('button', { name: 'New schedule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    await dialog.getByLabel('Name').fill(`${SCHEDULE}-yearly`);
    await dialog.getByLabel('Cron').fill('0 0 1 *');
    await dialog.getByLabel('Main module').fill('tick');
    await dialog.getByLabel('Python files (pyFiles)').setInputFiles({
      name: 'tick.py',
      mimeType: 'text/x-python',
      buffer: Buffer.from('print("tick")\n'),
    });
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await dialog.getByText(/has 4 fields; a cron expression has 5/).waitFor();
    await dialog.getByLabel('Cron').fill('0 0 1 1 *');
    await dialog.getByText('At 00:00 UTC, on day 1 of the month, in January').waitFor();
    await screenshot(page, 'schedule-create');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await page.waitForURL(/#\/schedules\/[0-9a-f]+$/, { timeout: 15_000 });
    await page.getByRole('heading', { name: `${SCHEDULE}-yearly` }).waitFor();
    await page.getByText('At 00:00 UTC, on day 1 of the month, in January', { exact: true }).waitFor();
    const id = /#\/schedules\/([0-9a-f]+)$/.exec(page.url())![1];
    expect((await c.api('GET', `/schedule/${id}`)).body).toMatchObject({ cron: '0 0 1 1 *', jobClass: 'tick' });
    expect((await c.api('DELETE', `/schedule/${id}`)).status).toBe(200);
    await page.context().close();
  });
}
