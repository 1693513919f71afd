// Headless Chromium for the console's end-to-end tests: Debian's `chromium` package (scripts/setup.sh
// installs it when the tests are set up), driven by playwright-core; no browser is downloaded. The flags keep
// Chromium from reaching out to the network, which this machine's closed network would refuse.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from '../lib/config';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots of the console's tests land here (kept after the run; not committed). */
export const SCREENSHOT_DIR = path.join(ROOT, 'test-output', 'console');

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: run scripts/setup.sh as root (apt-get install chromium), or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** A full-page PNG named after what it shows, e.g. `jobs-list`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A control the user cannot name: what it is and where. */
export interface Unnamed {
  tag: string;
  html: string;
}

/**
 * Every visible button, link, input, select and textarea on the page has an accessible name (aria-label,
 * aria-labelledby, a label, its text, or a title): what a screen reader would announce. Returns the ones
 * without. A small check of the page's markup, not a full accessibility audit.
 */
export async function unnamedControls(page: Page): Promise<Unnamed[]> {
  return page.evaluate(`(() => {
    const named = (el) => {
      if (el.getAttribute('aria-label')?.trim()) return true;
      const by = el.getAttribute('aria-labelledby');
      if (by && by.split(/\\s+/).some((id) => document.getElementById(id)?.textContent?.trim())) return true;
      if (el.labels && [...el.labels].some((l) => l.textContent.trim())) return true;
      if (el.closest('label')?.textContent?.trim()) return true;
      if (['BUTTON', 'A'].includes(el.tagName) && el.textContent.trim()) return true;
      if (el.getAttribute('title')?.trim()) return true;
      if (el.tagName === 'INPUT' && ['submit', 'button'].includes(el.type) && el.value) return true;
      return false;
    };
    const visible = (el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
    return [...document.querySelectorAll('button, a[href], input:not([type=hidden]), select, textarea')]
      .filter((el) => visible(el) && !named(el))
      .map((el) => ({ tag: el.tagName.toLowerCase(), html: el.outerHTML.slice(0, 160) }));
  })()`);
}

/** Starts recording layout shifts (Chromium's layout-shift entries) not caused by the user's own input. */
export async function recordLayoutShifts(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    window.__shifts = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shifts.push(e.value);
    }).observe({ type: 'layout-shift', buffered: false });
  })()`);
}

/** The sum of the layout shifts recorded since recordLayoutShifts (0: nothing moved). */
export async function layoutShiftScore(page: Page): Promise<number> {
  return page.evaluate(`(window.__shifts || []).reduce((a, b) => a + b, 0)`);
}
