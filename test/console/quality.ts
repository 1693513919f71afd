// Checks every page of the console against the bar once the other scenarios have filled the stack with
// data: every control has an accessible name, Tab reaches the page's controls with a visible focus, and the
// page does not jump while its data loads and streams in (Chromium's layout-shift score stays small).
import { expect, it } from 'vitest';
import { layoutShiftScore, recordLayoutShifts, unnamedControls } from '../../testkit/browser';
import type { ConsoleContext } from './context';

const PAGES = ['/', '/jobs', '/jobs/new', '/groups', '/schedules', '/sql', '/clusters'];

export function qualityScenarios(c: ConsoleContext): void {
  it('names every control and keeps the keyboard focus visible on every page', async () => {
    const page = await c.open('/');
    for (const hash of PAGES) {
      await page.goto(`${c.consoleUrl}#${hash}`);
      await page.getByRole('main').waitFor();
      await page.waitForLoadState('networkidle');
      expect(await unnamedControls(page), `controls without a name on #${hash}`).toEqual([]);
      // Tab moves into the page and the focused element shows an outline.
      await page.keyboard.press('Tab');
      const outline = await page.evaluate(
        `(() => { const el = document.activeElement; return el && el !== document.body ? getComputedStyle(el).outlineStyle : 'none'; })()`,
      );
      expect(outline, `focus outline on #${hash}`).not.toBe('none');
    }
    await page.context().close();
  });

  it('does not shift the layout while lists load and stream', async () => {
    const page = await c.open('/');
    for (const hash of ['/', '/jobs', '/groups', '/schedules']) {
      await page.goto(`${c.consoleUrl}#${hash}`);
      await recordLayoutShifts(page);
      await page.waitForTimeout(2_000);
      expect(await layoutShiftScore(page), `layout shift on #${hash}`).toBeLessThan(0.1);
    }
    await page.context().close();
  });
}
