// The console's frame: served by the API on its own port, sign-in with an API key, refusal of a wrong one,
// the navigation, a phone-sized viewport, and the files it serves.
import { expect, it } from 'vitest';
import { screenshot } from '../../testkit/browser';
import type { ConsoleContext } from './context';

export function shellScenarios(c: ConsoleContext): void {
  it('is served at /console/ of the API port, / redirects there, and only its own files are served', async () => {
    const base = c.consoleUrl.replace(/\/console\/$/, '');
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
    const index = await fetch(c.consoleUrl);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    const html = await index.text();
    const js = /src="(app-[0-9a-f]+\.js)"/.exec(html)?.[1];
    expect(js).toBeTruthy();
    const asset = await fetch(`${c.consoleUrl}${js}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toMatch(/immutable/);
    for (const p of ['..%2Fpackage.json', '..%2F..%2Fpackage.json', 'nope.js', 'sub%2Findex.html']) {
      const r = await fetch(`${c.consoleUrl}${p}`);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { message?: string }).message).toBeTruthy();
    }
  });

  it('asks for a credential, refuses a wrong one with the reason, and signs in with an API key', async () => {
    const page = await c.open('/', { key: '' });
    await page.evaluate('sessionStorage.clear()');
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await screenshot(page, 'sign-in');
    await page.getByLabel('API key or access token').fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/key|credential|token/i);
    await page.getByLabel('API key or access token').fill(c.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'sections' }).waitFor();
    expect(await page.locator('.who .role').textContent()).toBe('admin');
    // The key never shows on the page.
    expect(await page.content()).not.toContain(c.adminKey);
    await page.context().close();
  });

  it('navigates between sections, and folds the menu on a phone', async () => {
    const page = await c.open('/jobs');
    for (const name of ['Groups', 'Schedules', 'SQL', 'Clusters', 'Jobs', 'Overview']) {
      await page.getByRole('navigation', { name: 'sections' }).getByRole('link', { name, exact: true }).click();
      await expect.poll(() => page.getByRole('link', { name, exact: true }).getAttribute('aria-current')).toBe('page');
    }
    await page.goto(`${c.consoleUrl}#/no/such/page`);
    await page.getByText('No page at').waitFor();
    await page.context().close();

    const phone = await c.open('/', { viewport: { width: 390, height: 844 } });
    const menu = phone.getByRole('button', { name: 'Menu' });
    await menu.waitFor();
    expect(await phone.getByRole('navigation', { name: 'sections' }).isVisible()).toBe(false);
    await menu.click();
    expect(await phone.getByRole('navigation', { name: 'sections' }).isVisible()).toBe(true);
    await screenshot(phone, 'phone-menu');
    await phone.context().close();
  });
}
