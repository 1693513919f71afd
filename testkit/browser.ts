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
