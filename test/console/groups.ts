// Scenarios of the console's groups pages, on one PYTHON CODE group of scale 1 created through the API: the
// list, the group's page following its instance to READY live, executions through the form (code, a result, a
// raised error with its stack trace, a config that is not JSON, a submit without waiting) landing in the
// results list without a reload, the service's refusal of a scale above its limit, creating, editing, pausing,
// resuming and deleting a group through the page, what a viewer sees, and archiving through the buttons.
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { screenshot } from '../../testkit/browser';
import { form } from '../../testkit/http';
import type { ConsoleContext } from './context';

const JOBS_PY = `
class Echo:
    def run(self, spark, config):
        return "%s from Spark %s" % (config.get("say"), spark.version)


class Boom:
    def run(self, spark, config):
        raise RuntimeError("boom on purpose: " + str(config.get("why")))
`;

const SPARK_TIMEOUT = 180_000;
const GROUP = `console-group-${Date.now() % 100000}`;
let groupId: string | undefined;

const mark = (page: Page) => page.evaluate('window.__noReload = true');
const stillSamePage = (page: Page) => page.evaluate('window.__noReload === true');

async function execute(page: Page, jobClass: string, config: string): Promise<void> {
  await page.getByRole('textbox', { name: /^Job class/ }).fill(jobClass);
  await page.getByLabel('Config (JSON)').fill(config);
  await page.getByRole('button', { name: 'Execute', exact: true }).click();
}

export function groupsScenarios(c: ConsoleContext): void {
  it(
    'shows a group live to READY, executes through the form, and lists the results without a reload',
    async () => {
      const created = await c.api(
        'POST',
        '/group',
        form(
          { name: GROUP, language: 'PYTHON', kind: 'CODE', scale: '1', driverMemory: '512m', tags: 'area=console' },
          { pyFiles: [{ name: 'jobs.py', content: JOBS_PY }] },
        ),
      );
      expect(created.status).toBe(200);
      groupId = created.body.groupId as string;

      const page = await c.open('/groups');
      await page.getByRole('heading', { name: 'Groups' }).waitFor();
      await page.getByRole('link', { name: GROUP }).waitFor();
      await screenshot(page, 'groups-list');
      await page.getByRole('link', { name: GROUP }).click();
      await page.getByRole('heading', { name: GROUP }).waitFor();
      await page.locator('.live-on').first().waitFor({ timeout: 15_000 });
      await mark(page);

      // The instance reaches READY by the stream alone.
      const instances = page.getByRole('table', { name: 'instances' });
      await instances.getByText('READY', { exact: true }).waitFor({ timeout: SPARK_TIMEOUT });

      // A CODE group runs code (the panel opens on it) and job classes.
      const outcome = page.getByRole('region', { name: 'execution outcome' });
      await page.getByRole('button', { name: 'Execute', exact: true }).click();
      await page.getByText('give the code to run').waitFor();
      await page.getByRole('textbox', { name: /^Code/ }).fill('spark.range(7).count() * 6');
      await page.getByRole('button', { name: 'Execute', exact: true }).click();
      await outcome.getByText('42', { exact: true }).waitFor({ timeout: 60_000 });
      await page.getByRole('radio', { name: 'Job class' }).check();

      // A config that is not JSON is refused before sending.
      await execute(page, 'jobs.Echo', '{"say": ');
      await page.getByText(/not valid JSON/).waitFor();

      await execute(page, 'jobs.Echo', '{"say": "hello console"}');
      await outcome.getByText(/hello console from Spark 3\./).waitFor({ timeout: 60_000 });

      await execute(page, 'jobs.Boom', '{"why": "a test"}');
      await outcome
        .getByRole('alert')
        .getByText(/RuntimeError: boom on purpose: a test/)
        .waitFor({ timeout: 60_000 });
      const trace = await outcome.getByLabel('Stack trace').textContent();
      expect(trace).toMatch(/Traceback|raise RuntimeError/);

      await page.getByRole('textbox', { name: /^Job class/ }).fill('jobs.Echo');
      await page.getByLabel('Config (JSON)').fill('{"say": "later"}');
      await page.getByRole('button', { name: 'Submit without waiting' }).click();
      await outcome.getByText(/^Submitted as/).waitFor({ timeout: 30_000 });

      const results = page.getByRole('region', { name: 'results' });
      await results.getByText(/hello console from Spark/).waitFor({ timeout: 30_000 });
      await results.getByText(/boom on purpose: a test/).waitFor();
      await results.getByText(/later from Spark/).waitFor({ timeout: 60_000 });
      expect(await stillSamePage(page)).toBe(true);
      await screenshot(page, 'group-page');

      // A scale above the service's limit is refused with its message.
      await page.getByLabel('Scale', { exact: true }).fill('100000');
      await page.getByRole('button', { name: 'Rescale' }).click();
      await page.getByText(/above the maximum group scale/).waitFor({ timeout: 15_000 });
      await page.context().close();
    },
    SPARK_TIMEOUT + 120_000,
  );

  it('creates a group through the form (a taken name refused with the service message), edits it, and deletes it', async () => {
    const page = await c.open('/groups');
    await page.getByRole('button', { name: 'New group' }).click();
    const dialog = page.getByRole('dialog', { name: 'New group' });
    await dialog.getByRole('textbox', { name: /^Name/ }).fill('bad name!');
    await dialog.getByRole('button', { name: 'Create group' }).click();
    await dialog.getByText(/must start with a letter or digit/).waitFor();
    await dialog.getByRole('textbox', { name: /^Name/ }).fill(GROUP);
    await dialog.getByRole('textbox', { name: /^Scale/ }).fill('0');
    await dialog.getByLabel('Python modules (pyFiles)').setInputFiles({
      name: 'jobs.py',
      mimeType: 'text/x-python',
      buffer: Buffer.from(JOBS_PY),
    });
    await dialog.getByRole('button', { name: 'Create group' }).click();
    await dialog.getByRole('alert').getByText(`name: a group named '${GROUP}' already exists`).waitFor();
    await dialog.getByRole('textbox', { name: /^Name/ }).fill(`${GROUP}-idle`);
    await screenshot(page, 'group-create');
    await dialog.getByRole('button', { name: 'Create group' }).click();
    await page.waitForURL(/#\/groups\/[0-9a-f]+$/, { timeout: 15_000 });
    await page.getByRole('heading', { name: `${GROUP}-idle` }).waitFor();
    await page.getByText('No instances running.').waitFor();
    const id = /#\/groups\/([0-9a-f]+)$/.exec(page.url())![1];
    expect((await c.api('GET', `/group/${id}`)).body).toMatchObject({ scale: 0, language: 'PYTHON', kind: 'JOB' });

    // Edit: the fields start as the group has them; a bad memory size is refused in the form; only what
    // changed is sent, and the page shows it.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const edit = page.getByRole('dialog', { name: `Edit ${GROUP}-idle` });
    expect(await edit.getByRole('combobox', { name: /^Pause when idle/ }).inputValue()).toBe('false');
    await edit.getByRole('textbox', { name: /^Description/ }).fill('nightly scoring');
    await edit.getByRole('textbox', { name: /^Tags/ }).fill('team=data;tier=gold');
    await edit.getByText('Memory settings').click();
    await edit.getByRole('textbox', { name: /^driverMemory/ }).fill('lots');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByText(/'lots' is not a JVM memory size/).waitFor();
    await edit.getByRole('textbox', { name: /^driverMemory/ }).fill('1g');
    await screenshot(page, 'group-edit');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden' });
    await page.getByText('nightly scoring').waitFor();
    await page.getByText('team=data;tier=gold').waitFor();
    const edited = (await c.api('GET', `/group/${id}`)).body;
    expect(edited).toMatchObject({ description: 'nightly scoring', tags: 'team=data;tier=gold', scale: 0 });
    expect(edited.memorySettings).toMatchObject({ driverMemory: '1g' });

    // Pause after a confirmation: the badge, the empty instances' words and the service agree; then resume.
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, pause' }).click();
    const header = page.locator('.page-header');
    await header.getByText('PAUSED', { exact: true }).waitFor({ timeout: 15_000 });
    await page.getByText('Paused: no drivers until resumed.').waitFor();
    expect((await c.api('GET', `/group/${id}`)).body.paused).toBe(true);
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor({ timeout: 15_000 });
    expect(await header.getByText('PAUSED', { exact: true }).count()).toBe(0);
    expect((await c.api('GET', `/group/${id}`)).body.paused).toBe(false);

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForURL(/#\/groups$/, { timeout: 60_000 });
    expect((await c.api('GET', `/group/${id}`)).status).toBe(404);
    await page.context().close();
  });

  it('hides actions from a viewer and archives through the buttons for an operator', async () => {
    expect(groupId).toBeTruthy();
    const viewer = await c.open(`/groups/${groupId}`, { key: await c.keyFor('viewer') });
    await viewer.getByRole('heading', { name: GROUP }).waitFor();
    await viewer
      .getByRole('region', { name: 'results' })
      .getByText(/hello console from Spark/)
      .waitFor();
    for (const name of ['Edit', 'Pause', 'Archive', 'Delete', 'Execute', 'Rescale'])
      expect(await viewer.getByRole('button', { name, exact: true }).count()).toBe(0);
    await viewer.context().close();

    const phone = await c.open(`/groups/${groupId}`, {
      key: await c.keyFor('operator'),
      viewport: { width: 390, height: 844 },
    });
    await phone.getByRole('heading', { name: GROUP }).waitFor();
    await phone
      .getByRole('region', { name: 'results' })
      .getByText(/hello console from Spark/)
      .waitFor();
    await screenshot(phone, 'group-page-phone');
    await phone.getByRole('button', { name: 'Archive', exact: true }).click();
    await phone.getByRole('button', { name: 'Yes, archive' }).click();
    await phone.locator('.page-header').getByText('ARCHIVED', { exact: true }).waitFor({ timeout: 60_000 });
    expect(await phone.getByRole('button', { name: 'Execute', exact: true }).count()).toBe(0);
    await phone.context().close();
  });
}
