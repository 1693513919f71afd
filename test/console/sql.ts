// Scenarios of the console's SQL pages against one real SPARK_SQL engine (Spark's Thrift Server) on the
// default local cluster: a typed statement through the editor (exact decimal digits, NULL apart from the empty
// string), the live query history, saving the statement; a notebook with an SQL and a Markdown cell that is
// run, saved, reordered and reloaded; and what a viewer is not offered.
import { afterAll, expect, it } from 'vitest';
import { layoutShiftScore, recordLayoutShifts, screenshot, unnamedControls } from '../../testkit/browser';
import type { ConsoleContext } from './context';

const STATEMENT =
  "select 1 as n, cast('12345678901234567890.123456789' as decimal(38,9)) as d, cast(null as string) as s, '' as e";
// A Spark driver needs 15–40 s to start here, more when other tests share the machine.
const SPARK = { timeout: 240_000 };

export function sqlScenarios(c: ConsoleContext): void {
  afterAll(async () => {
    // The engine is a Spark driver of this stack: stop it before the stack goes.
    if (c.h) await c.api('DELETE', '/sql/engine/sparksql-default');
  });

  it('runs a typed statement from the editor, shows it live in the history, and saves it', async () => {
    // Start the engine now; the first statement waits for it.
    const started = await c.api('POST', '/sql/engine/default', { type: 'SPARK_SQL', async: true });
    expect(started.status).toBe(200);

    const page = await c.open('/sql');
    const history = page.getByRole('table', { name: 'Query history' });
    await history.getByText('No statements yet.').waitFor();
    await page.getByLabel('SQL statement').fill(STATEMENT);
    await page.getByLabel('SQL statement').press('Control+Enter');

    const result = page.getByRole('table', { name: 'Result rows' });
    await result.waitFor(SPARK);
    const headers = await result.locator('thead th').allTextContents();
    expect(headers).toEqual(['nINT', 'dDECIMAL(38,9)', 'sSTRING', 'eSTRING']);
    const cells = result.locator('tbody td');
    expect(await cells.allTextContents()).toEqual(['1', '12345678901234567890.123456789', 'NULL', "''empty string"]);
    // NULL is a badge, the empty string a marker: told apart, and numbers are right-aligned.
    expect(await cells.nth(2).locator('.sql-null').count()).toBe(1);
    expect(await cells.nth(3).locator('.sql-empty').count()).toBe(1);
    expect(await cells.nth(1).getAttribute('class')).toContain('num');

    // The history was loaded empty before the run: the row came from the /sql-history stream.
    const row = history.getByRole('row').filter({ hasText: 'decimal(38,9)' });
    await row.getByText('FINISHED').waitFor({ timeout: 30_000 });
    expect(await row.locator('td').nth(3).textContent()).toBe('1');

    // Save: the API's refusal of an empty name shows next to the form, then a good name is saved.
    await page.getByRole('button', { name: 'Save as…' }).click();
    const form = page.getByRole('form', { name: 'Name of the saved statement' });
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toMatch(/name/);
    await form.getByLabel('Name of the saved statement').fill('typed values');
    await form.getByRole('button', { name: 'Save' }).click();
    const saved = page.getByRole('list', { name: 'Saved statements' });
    await saved.getByText('typed values').waitFor();
    const list = await c.api('GET', '/sql/statement?search=typed%20values');
    expect(list.body.content).toEqual([
      expect.objectContaining({ name: 'typed values', statement: STATEMENT, engine: 'SPARK_SQL', maxRows: 1000 }),
    ]);

    // A failing statement shows the engine's own message.
    await page.getByLabel('SQL statement').fill('select * from no_such_table_anywhere');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect
      .poll(() => page.locator('.sql-output').getByRole('alert').textContent(), { timeout: 60_000 })
      .toMatch(/no_such_table_anywhere/i);

    // Opening the saved statement puts it back into the editor.
    await saved.getByRole('button', { name: 'Open typed values' }).click();
    expect(await page.getByLabel('SQL statement').inputValue()).toBe(STATEMENT);
    await page.getByRole('button', { name: 'Run' }).click();
    await result.waitFor(SPARK);
    await page.locator('.sql-engine').filter({ hasText: 'Spark SQL' }).getByText('RUNNING').waitFor();
    await screenshot(page, 'sql-workspace');

    // Rename, then delete, the saved statement.
    await saved.getByRole('button', { name: 'Rename typed values' }).click();
    await saved.getByRole('textbox', { name: 'New name of typed values' }).fill('typed values, renamed');
    await saved.getByRole('button', { name: 'Rename', exact: true }).click();
    await saved.getByText('typed values, renamed').waitFor();
    await saved.getByRole('button', { name: 'Delete' }).click();
    await saved.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('No saved statements yet.').waitFor();
    expect((await c.api('GET', '/sql/statement')).body.totalElements).toBe(0);
    await page.context().close();
  });

  it('builds a notebook of an SQL and a Markdown cell, runs, saves, reorders and reloads it', async () => {
    const page = await c.open('/sql');
    await page.getByRole('button', { name: 'New notebook' }).click();
    await page.getByRole('textbox', { name: 'Name of the new notebook' }).fill('console notebook');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/#\/sql\/notebooks\/.+/);
    const id = decodeURIComponent(page.url().split('/sql/notebooks/')[1]);

    await page.getByRole('button', { name: 'Add SQL cell' }).click();
    await page.getByRole('textbox', { name: 'Cell 1 (SQL)' }).fill('select 40 + 2 as answer');
    await page.getByRole('button', { name: 'Add Markdown cell' }).click();
    await page
      .getByRole('textbox', { name: 'Cell 2 (MARKDOWN)' })
      .fill('# Notes\n\nSome **bold** text, a [link](https://spark.apache.org) and [no link](javascript:alert(1)).');
    await page.getByRole('button', { name: 'Preview cell 2' }).click();
    await page.getByRole('heading', { name: 'Notes' }).waitFor();
    expect(await page.getByRole('link', { name: 'link', exact: true }).getAttribute('href')).toBe(
      'https://spark.apache.org',
    );
    expect(await page.getByRole('link', { name: 'no link' }).count()).toBe(0);
    expect(await page.locator('.markdown strong').textContent()).toBe('bold');

    await page.getByRole('button', { name: 'Run cell 1' }).click();
    const result = page.getByRole('listitem', { name: 'Cell 1 (SQL)' }).getByRole('table', { name: 'Result rows' });
    await result.waitFor(SPARK);
    expect(await result.locator('tbody td').allTextContents()).toEqual(['42']);

    // The API's validation message shows when the name is empty; then a good save.
    const name = page.getByLabel('Notebook name');
    await name.fill('');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/name/);
    await name.fill('console notebook');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('saved', { exact: true }).waitFor();
    await screenshot(page, 'sql-notebook');

    await page.reload();
    await expect
      .poll(() => page.getByRole('textbox', { name: 'Cell 1 (SQL)' }).inputValue())
      .toBe('select 40 + 2 as answer');
    await page.getByRole('heading', { name: 'Notes' }).waitFor();
    expect(await unnamedControls(page)).toEqual([]);

    // Move the Markdown cell up, save, and the API keeps the new order.
    await page.getByRole('button', { name: 'Move cell 2 up' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('saved', { exact: true }).waitFor();
    const nb = await c.api('GET', `/sql/notebooks/${encodeURIComponent(id)}`);
    expect(nb.body.statements.map((s: { language: string }) => s.language)).toEqual(['MARKDOWN', 'SQL']);
    await page.context().close();

    // A viewer reads the notebook but is offered no run, save or edit.
    const viewer = await c.open(`/sql/notebooks/${encodeURIComponent(id)}`, { key: await c.keyFor('viewer') });
    await viewer.getByRole('heading', { name: 'Notes' }).waitFor();
    expect(await viewer.getByRole('button', { name: /Run|Save|Add SQL cell/ }).count()).toBe(0);
    expect(await viewer.getByRole('textbox', { name: 'Cell 2 (SQL)' }).getAttribute('readonly')).not.toBeNull();
    await viewer.goto(`${c.consoleUrl}#/sql`);
    await viewer.getByText('Running and saving statements needs the operator role.').waitFor();
    expect(await viewer.getByRole('button', { name: 'New notebook' }).count()).toBe(0);
    await viewer.setViewportSize({ width: 390, height: 844 });
    await viewer.getByRole('table', { name: 'Query history' }).getByText('FINISHED').first().waitFor();
    await screenshot(viewer, 'sql-workspace-phone');
    await viewer.context().close();

    // The list renames and deletes notebooks.
    const admin = await c.open('/');
    await admin.getByRole('main').waitFor();
    await admin.goto(`${c.consoleUrl}#/sql`);
    await recordLayoutShifts(admin);
    const notebooks = admin.getByRole('list', { name: 'Notebooks' });
    await notebooks.getByRole('link', { name: 'console notebook' }).waitFor();
    await admin.waitForTimeout(1_500);
    expect(await layoutShiftScore(admin)).toBeLessThan(0.1);
    expect(await unnamedControls(admin)).toEqual([]);
    await notebooks.getByRole('button', { name: 'Rename console notebook' }).click();
    await notebooks.getByRole('textbox', { name: 'New name of console notebook' }).fill('renamed notebook');
    await notebooks.getByRole('button', { name: 'Rename', exact: true }).click();
    await notebooks.getByRole('link', { name: 'renamed notebook' }).waitFor();
    expect((await c.api('GET', `/sql/notebooks/${encodeURIComponent(id)}`)).body).toMatchObject({
      name: 'renamed notebook',
      statements: [{ language: 'MARKDOWN' }, { language: 'SQL', code: 'select 40 + 2 as answer' }],
    });
    await notebooks.getByRole('button', { name: 'Delete' }).click();
    await notebooks.getByRole('button', { name: 'Yes, delete' }).click();
    await admin.getByText('No notebooks yet.').waitFor();
    expect((await c.api('GET', `/sql/notebooks/${encodeURIComponent(id)}`)).status).toBe(404);
    await admin.context().close();
  });
}
