// Scenarios of the console's jobs pages: a PySpark job submitted through the form reaches FINISHED on its page
// and in the list without a reload; the form shows the browser's check and the service's own refusal; a
// viewer sees no cancel/stop/delete while an operator does: a cancel shows live, a delete returns to the list.
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { screenshot } from '../../testkit/browser';
import { form } from '../../testkit/http';
import type { ConsoleContext } from './context';

const COUNT_PY = `
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
print("COUNT=%d" % spark.range(1000).count())
spark.stop()
`;

const SPARK_TIMEOUT = 180_000;
const JOB_NAME = `console-count-${Date.now() % 100000}`;

/** Set once the first scenario submitted its job; the later ones reuse it. */
let jobId: string | undefined;

/** Marks the window: the mark survives only as long as the page is not reloaded. */
const mark = (page: Page) => page.evaluate('window.__noReload = true');
const stillSamePage = (page: Page) => page.evaluate('window.__noReload === true');

export function jobsScenarios(c: ConsoleContext): void {
  it(
    'submits a PySpark job through the form; its page and the list follow it to FINISHED without a reload',
    async () => {
      const list = await c.open('/jobs?states=SUBMITTED,STARTING,READY,BUSY,FINISHED');
      await list.getByRole('heading', { name: 'Jobs' }).waitFor();
      await list.locator('.live-on').waitFor({ timeout: 15_000 });
      await mark(list);

      const form = await c.open('/jobs/new');
      await form.getByRole('heading', { name: 'Submit a job' }).waitFor();
      await expect.poll(() => form.getByLabel('Cluster').inputValue(), { timeout: 10_000 }).toBe('default');
      await form.getByLabel('Name').fill(JOB_NAME);
      await form.getByLabel('Language').selectOption('PYTHON');
      await form.getByLabel('Main module').fill('count');
      await form.getByLabel('Python files (pyFiles)').setInputFiles({
        name: 'count.py',
        mimeType: 'text/x-python',
        buffer: Buffer.from(COUNT_PY),
      });
      await form.getByLabel('Tags').fill('area=console');
      await form.getByLabel('driverMemory').fill('512m');
      await screenshot(form, 'job-submit');
      await form.getByRole('button', { name: 'Submit job' }).click();

      await form.waitForURL(/#\/jobs\/[0-9a-f]+$/, { timeout: 15_000 });
      jobId = /#\/jobs\/([0-9a-f]+)$/.exec(form.url())![1];
      await form.getByRole('heading', { name: JOB_NAME }).waitFor();
      await mark(form);
      // The badge turns FINISHED by the stream alone.
      await form
        .getByRole('heading', { name: JOB_NAME })
        .getByText('FINISHED', { exact: true })
        .waitFor({ timeout: SPARK_TIMEOUT });
      expect(await stillSamePage(form)).toBe(true);
      // The page saw states arrive live, and the logs show the program's output.
      expect(await form.locator('.tl-seen').count()).toBeGreaterThan(1);
      await expect
        .poll(async () => (await form.locator('.log-pre').allTextContents()).join('\n'), { timeout: 30_000 })
        .toContain('COUNT=1000');
      expect(await form.getByText('try 1 of 1').count()).toBeGreaterThan(0);
      expect(await form.getByText('512m').count()).toBeGreaterThan(0);
      await screenshot(form, 'job-page');

      // The list got the new job on its first page and follows its state in place.
      const row = list.getByRole('row').filter({ has: list.getByRole('link', { name: JOB_NAME }) });
      await row.getByText('FINISHED', { exact: true }).waitFor({ timeout: 30_000 });
      expect(await stillSamePage(list)).toBe(true);
      await screenshot(list, 'jobs-list');

      // A link reproduces a filtered view: FINISHED only, searched by name.
      await list.goto(`${c.consoleUrl}#/jobs?states=FINISHED&search=${JOB_NAME}`);
      await list.getByRole('link', { name: JOB_NAME }).waitFor();
      expect(await list.getByLabel('FINISHED').isChecked()).toBe(true);
      expect(await list.getByLabel('BUSY').isChecked()).toBe(false);
      await list.getByLabel('Search').fill('no-such-job-name');
      await list.getByLabel('Search').press('Enter');
      await list.getByText('No job matches these filters.').waitFor();
      expect(list.url()).toContain('search=no-such-job-name');
      await list.context().close();
      await form.context().close();
    },
    SPARK_TIMEOUT + 60_000,
  );

  it('checks the form in the browser and shows the service’s own message when it refuses', async () => {
    const made = await c.api('POST', '/cluster', {
      name: 'console-tiny',
      type: 'local',
      resourceQuota: { limitsMemory: '100Mi' },
    });
    expect(made.status).toBe(200);
    const form = await c.open('/jobs/new');
    await form.getByRole('heading', { name: 'Submit a job' }).waitFor();
    // The browser's check, with the API's wording: nothing is sent.
    await form.getByLabel('Language').selectOption('PYTHON');
    await form.getByLabel('Name').fill('-bad');
    await form.getByLabel('Tags').fill('novalue');
    await form.getByRole('button', { name: 'Submit job' }).click();
    await form.getByText('must start with a letter or digit').waitFor();
    await form.getByText("entry 'novalue' is not of the form key=value").waitFor();
    await form.getByText('a PYTHON job needs the module among its pyFiles').waitFor();
    // A valid form on a cluster whose quota is too small: the service refuses with its message.
    await form.getByLabel('Name').fill('too-big');
    await form.getByLabel('Tags').fill('');
    await expect.poll(() => form.locator('#job-clusterName option').allTextContents()).toContain('console-tiny');
    await form.getByLabel('Cluster').selectOption('console-tiny');
    await form.getByLabel('Main module').fill('count');
    await form.getByLabel('Python files (pyFiles)').setInputFiles({
      name: 'count.py',
      mimeType: 'text/x-python',
      buffer: Buffer.from(COUNT_PY),
    });
    await form.getByRole('button', { name: 'Submit job' }).click();
    const alert = form.getByRole('alert').filter({ hasText: 'resourceQuota' });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/above the 100Mi of cluster 'console-tiny' resourceQuota \(402\)/);
    expect(form.url()).toMatch(/#\/jobs\/new$/);
    await form.context().close();
  });

  it('hides cancel, stop and delete from a viewer; an operator cancels a running job and deletes an ended one', async () => {
    expect(jobId).toBeTruthy();
    const sleeper = await c.api(
      'POST',
      '/job/submit',
      form(
        { name: 'console-sleeper', language: 'PYTHON', jobClass: 'sleeper' },
        { pyFiles: [{ name: 'sleeper.py', content: 'import time\ntime.sleep(300)\n' }] },
      ),
    );
    expect(sleeper.status).toBe(200);
    const sleeperId = sleeper.body.jobId as string;

    // The viewer reads both jobs, the running one and the finished one, on a phone: no action shows.
    const viewer = await c.open(`/jobs/${sleeperId}`, {
      key: await c.keyFor('viewer'),
      viewport: { width: 390, height: 844 },
    });
    await viewer.getByRole('heading', { name: 'console-sleeper' }).waitFor();
    expect(await viewer.locator('h1 .badge').textContent()).toMatch(/SUBMITTED|STARTING|BUSY/);
    for (const name of ['Cancel', 'Stop', 'Delete'])
      expect(await viewer.getByRole('button', { name, exact: true }).count()).toBe(0);
    await viewer.goto(`${c.consoleUrl}#/jobs/${jobId}`);
    await viewer.getByRole('heading', { name: JOB_NAME }).waitFor();
    await viewer.locator('.log-pre').first().waitFor();
    await screenshot(viewer, 'job-page-phone');
    for (const name of ['Cancel', 'Stop', 'Delete'])
      expect(await viewer.getByRole('button', { name, exact: true }).count()).toBe(0);
    await viewer.goto(`${c.consoleUrl}#/jobs?states=FINISHED`);
    await viewer.getByRole('link', { name: JOB_NAME }).waitFor();
    expect(await viewer.getByRole('link', { name: 'Submit a job' }).count()).toBe(0);
    await screenshot(viewer, 'jobs-list-phone');
    await viewer.context().close();

    // The operator sees stop and cancel on the running job; a cancel shows live.
    const operator = await c.open(`/jobs/${sleeperId}`, { key: await c.keyFor('operator') });
    await operator.getByRole('heading', { name: 'console-sleeper' }).waitFor();
    await operator.getByRole('button', { name: 'Stop', exact: true }).waitFor();
    await operator.getByRole('button', { name: 'Cancel', exact: true }).click();
    await operator.getByRole('button', { name: 'Yes, cancel' }).click();
    await operator
      .getByRole('heading', { name: 'console-sleeper' })
      .getByText('CANCELED', { exact: true })
      .waitFor({ timeout: 30_000 });
    await operator.getByRole('button', { name: 'Delete', exact: true }).waitFor();

    // Deleting the finished job returns to the list.
    await operator.goto(`${c.consoleUrl}#/jobs/${jobId}`);
    await operator.getByRole('heading', { name: JOB_NAME }).waitFor();
    await operator.getByRole('button', { name: 'Delete', exact: true }).click();
    await operator.getByRole('button', { name: 'Yes, delete' }).click();
    await operator.waitForURL(/#\/jobs$/, { timeout: 30_000 });
    await operator.getByRole('heading', { name: 'Jobs' }).waitFor();
    expect((await c.api('GET', `/job/${jobId}`)).status).toBe(404);
    await operator.context().close();
  });
}
