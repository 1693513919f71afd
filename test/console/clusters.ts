// Scenarios of the console's overview and clusters pages: the overview's counts follow a group's instance live
// and its two charts show jobs and execution latencies (one small PYTHON group, real Spark); a k8s cluster is
// created through the form with a token (the API's validation message shown first), found with the token
// masked and never in the page, edited without losing the token, and deleted; a yarn cluster is created with the
// settings GET /cluster/types gives its type (a refused Hadoop property shown under its field), shown and edited;
// a viewer sees no cluster actions.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { unsealClusterSecrets } from '../../lib/cluster-secrets';
import { Collections } from '../../lib/mongo';
import { screenshot } from '../../testkit/browser';
import { form } from '../../testkit/http';
import { eventually } from '../../testkit/wait';
import type { ConsoleContext } from './context';

const JOBS_PY = `
class Echo:
    def run(self, spark, config):
        return str(spark.sparkContext.parallelize(range(int(config.get('n', '10')))).count())
`;

/** The number in the row of `state` of the overview's count table `table`. */
const count = async (page: Page, table: string, state: string) => {
  const row = page.getByRole('table', { name: `${table} by state` }).getByRole('row', { name: state });
  return Number(await row.getByRole('cell').textContent());
};

export function clustersScenarios(c: ConsoleContext): void {
  it('overview: counts follow a group instance live, and both charts show data', async () => {
    const page = await c.open('/');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect.poll(() => count(page, 'Groups', 'ACTIVE'), { timeout: 15_000 }).toBeGreaterThanOrEqual(0);
    const readyBefore = await count(page, 'Group instances', 'READY');
    const groupsBefore = await count(page, 'Groups', 'ACTIVE');

    const created = await c.api(
      'POST',
      '/group',
      form(
        { name: `overview-${randomBytes(3).toString('hex')}`, language: 'PYTHON', scale: '1', driverMemory: '512m' },
        { pyFiles: [{ name: 'ov.py', content: JOBS_PY }] },
      ),
    );
    expect(created.status).toBe(200);
    const groupId = created.body.groupId as string;
    try {
      // No reload: the /jobs stream moves the counts as the instance starts and becomes READY.
      await expect
        .poll(() => count(page, 'Group instances', 'READY'), { timeout: 120_000, interval: 1000 })
        .toBe(readyBefore + 1);
      expect(await count(page, 'Groups', 'ACTIVE')).toBe(groupsBefore + 1);

      for (const n of ['10', '2000']) {
        const r = await c.api('POST', `/group/${groupId}/job/execute`, { jobClass: 'ov.Echo', jobConfig: { n } });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.result).toBe(n);
      }
      // Both charts: the instance's submission in the jobs chart, and the two executions on the result stream.
      const jobs = page.getByRole('img', { name: /Jobs per hour/ });
      await expect.poll(async () => (await jobs.getAttribute('aria-labelledby')) ?? '').toContain('chart-jobs');
      await expect.poll(() => page.locator('#chart-jobs-desc').textContent()).toMatch(/submitted [1-9]/);
      const latency = page.getByRole('img', { name: /Execution latency/ });
      await latency.waitFor();
      await expect.poll(() => page.locator('#chart-latency-desc').textContent()).toMatch(/^[2-9]\d* executions/);
      expect(await latency.locator('circle').count()).toBeGreaterThanOrEqual(2);
      // The instance went BUSY and back: the counts follow it (the runner reports READY up to an interval after
      // the execution, so both counts are read together until they settle).
      await expect
        .poll(
          async () => [await count(page, 'Group instances', 'READY'), await count(page, 'Group instances', 'BUSY')],
          {
            timeout: 15_000,
          },
        )
        .toEqual([readyBefore + 1, 0]);
      await screenshot(page, 'overview');
    } finally {
      await c.api('POST', `/group/${groupId}/stop`);
      await page.context().close();
    }
  });

  it('clusters: create a k8s cluster with a token, see it masked, edit it, delete it', async () => {
    const name = `k8s-${randomBytes(3).toString('hex')}`;
    const token = `tok-${randomBytes(16).toString('hex')}`;
    const accessKey = `AK${randomBytes(8).toString('hex')}`;
    const page = await c.open('/clusters');
    await page.getByRole('button', { name: 'New cluster' }).click();
    const createForm = page.getByRole('region', { name: 'new cluster' });
    await createForm.getByLabel('Cluster name').fill(name);
    await createForm.getByLabel('Type').selectOption('k8s');
    await createForm.getByLabel('API server URL').fill('https://k8s.example.test:6443');
    await createForm.getByLabel('Bearer token').fill(token);
    await createForm.getByLabel('Description').fill('made in the console');
    await createForm.getByRole('button', { name: 'Add a storage' }).click();
    await createForm.getByLabel('Spark bucket').fill('spark-artifacts');
    await createForm.getByLabel('Access key').fill(accessKey);
    // A value the API refuses: its message appears next to the field, and nothing is created.
    await createForm.getByLabel('CPU (limit)').fill('lots');
    await createForm.getByRole('button', { name: 'Create cluster' }).click();
    const fieldError = createForm.locator('.field-error', { has: page.getByLabel('CPU (limit)') });
    await fieldError.locator('.error-text').waitFor();
    expect(await fieldError.textContent()).toMatch(/lots/);
    await screenshot(page, 'cluster-form');
    await createForm.getByLabel('CPU (limit)').fill('8');
    await createForm.getByRole('button', { name: 'Create cluster' }).click();

    await page.getByRole('heading', { name }).waitFor();
    const clusterId = decodeURIComponent(page.url().split('#/clusters/')[1]);
    expect(await page.getByText('made in the console').count()).toBe(1);
    const settings = page.getByRole('region', { name: 'Settings' });
    expect(await settings.getByText('set (hidden)').count()).toBe(1);
    let html = await page.content();
    expect(html).not.toContain(token);
    expect(html).not.toContain(accessKey);
    const got = await c.api('GET', `/cluster/${clusterId}`);
    expect(got.body).toMatchObject({ token: '******', storages: { s3: { accessKey: '******' } } });
    expect(got.body.resourceQuota).toEqual({ limitsCpu: '8' });
    await screenshot(page, 'cluster-page');

    // Edit the description only: the stored token and access key stay as they were.
    await page.getByRole('button', { name: 'Edit' }).click();
    const editForm = page.getByRole('region', { name: 'edit cluster' });
    expect(await editForm.getByLabel('Bearer token', { exact: false }).first().inputValue()).toBe('');
    await editForm.getByLabel('Description').fill('edited in the console');
    await editForm.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('edited in the console').waitFor();
    html = await page.content();
    expect(html).not.toContain(token);
    const doc = await c.h.store.col<Record<string, unknown>>(Collections.clusters).findOne({ name });
    const plain = unsealClusterSecrets(c.h.config.SECRET_KEY, doc!);
    expect(plain.token).toBe(token);
    expect((plain.storages as Record<string, { accessKey?: string }>).s3.accessKey).toBe(accessKey);
    expect(plain.description).toBe('edited in the console');

    await page.goto(`${c.consoleUrl}#/clusters`);
    await page.getByRole('link', { name }).waitFor();
    await screenshot(page, 'clusters-list');
    await page.getByRole('link', { name }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('heading', { name: 'Clusters' }).waitFor();
    await eventually(async () => (await c.api('GET', `/cluster/${clusterId}`)).status === 404 || undefined, 10_000);
    await expect.poll(() => page.getByRole('link', { name }).count()).toBe(0);
    await page.context().close();
  });

  it("clusters: a yarn cluster through the form, with its type's own settings from GET /cluster/types", async () => {
    const name = `yarn-${randomBytes(3).toString('hex')}`;
    const page = await c.open('/clusters');
    await page.getByRole('button', { name: 'New cluster' }).click();
    const createForm = page.getByRole('region', { name: 'new cluster' });
    // Every type the API lists, with its words.
    const types = (await c.api('GET', '/cluster/types')).body.types as { type: string; title: string }[];
    const options = await createForm.getByLabel('Type').locator('option').allTextContents();
    expect(options).toEqual(types.map((t) => `${t.type}: ${t.title}`));
    await createForm.getByLabel('Cluster name').fill(name);
    await createForm.getByLabel('Type').selectOption('yarn');
    // The yarn type's settings, and none of another type's.
    await createForm.getByRole('group', { name: 'Settings of yarn clusters' }).waitFor();
    expect(await createForm.getByLabel('Bearer token').count()).toBe(0);
    expect(await createForm.getByLabel('Threads (local[N])').count()).toBe(0);
    await createForm.getByLabel('ResourceManager web address').fill('http://rm.example.test:8088');
    await createForm.getByLabel('YARN queue').fill('analytics');
    const hadoop = createForm.getByLabel('Hadoop configuration');
    await hadoop.fill('fs.defaultFS=file:///\nhadoop.security.authentication=kerberos');
    await createForm.getByRole('button', { name: 'Create cluster' }).click();
    // The API's refusal of one key appears under the field that holds it; nothing is created.
    const fieldError = createForm.locator('.field-error', { hasText: 'Hadoop configuration' });
    await fieldError.locator('.error-text').waitFor();
    expect(await fieldError.textContent()).toMatch(/hadoop\.security\.authentication/);
    expect((await c.api('GET', `/cluster?search=${name}`)).body.content).toEqual([]);
    await hadoop.fill('fs.defaultFS=file:///');
    await createForm.getByRole('button', { name: 'Create cluster' }).click();

    await page.getByRole('heading', { name }).waitFor();
    const clusterId = decodeURIComponent(page.url().split('#/clusters/')[1]);
    const settings = page.getByRole('region', { name: 'Settings' });
    await settings.getByText('yarn: YARN applications on Hadoop YARN').waitFor();
    expect(await settings.getByText('analytics', { exact: true }).count()).toBe(1);
    expect(await settings.getByText('file:///').count()).toBe(1);
    expect(await settings.getByText('http://rm.example.test:8088').count()).toBe(1);
    await screenshot(page, 'cluster-page-yarn');
    expect((await c.api('GET', `/cluster/${clusterId}`)).body).toMatchObject({
      type: 'yarn',
      sparkMaster: 'yarn',
      url: 'http://rm.example.test:8088',
      queue: 'analytics',
      hadoopConf: { 'fs.defaultFS': 'file:///' },
    });

    // Edit: the form holds the stored settings; a changed queue is saved, the rest kept.
    await page.getByRole('button', { name: 'Edit' }).click();
    const editForm = page.getByRole('region', { name: 'edit cluster' });
    expect(await editForm.getByLabel('Hadoop configuration').inputValue()).toBe('fs.defaultFS=file:///');
    await editForm.getByLabel('YARN queue').fill('etl');
    await editForm.getByRole('button', { name: 'Save changes' }).click();
    await settings.getByText('etl', { exact: true }).waitFor();
    expect((await c.api('GET', `/cluster/${clusterId}`)).body).toMatchObject({
      queue: 'etl',
      hadoopConf: { 'fs.defaultFS': 'file:///' },
    });
    expect((await c.api('DELETE', `/cluster/${clusterId}`)).status).toBe(200);
    await page.context().close();
  });

  it('clusters: a viewer sees the clusters but no create, edit or delete; the overview fits a phone', async () => {
    const key = await c.keyFor('viewer');
    const phone = await c.open('/', { key, viewport: { width: 390, height: 844 } });
    await phone.getByRole('img', { name: /Execution latency/ }).waitFor();
    await expect.poll(() => count(phone, 'Groups', 'ACTIVE'), { timeout: 15_000 }).toBeGreaterThanOrEqual(0);
    // Nothing of the page wider than the screen.
    expect(await phone.evaluate("document.getElementById('main').scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(phone, 'overview-phone');
    await phone.context().close();

    const page = await c.open('/clusters', { key });
    await page.getByRole('link', { name: 'default' }).waitFor();
    expect(await page.getByRole('button', { name: 'New cluster' }).count()).toBe(0);
    await page.getByRole('link', { name: 'default' }).click();
    await page.getByRole('heading', { name: /default/ }).waitFor();
    await page.getByRole('region', { name: 'Settings' }).waitFor();
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    await page.context().close();
  });
}
