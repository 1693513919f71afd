// The web console end to end in headless Chromium (testkit/browser.ts): one stack with authentication on and
// a real worker (real Spark in local mode), one browser; each area's scenarios live in test/console/<area>.ts
// and open their own signed-in pages. Screenshots of every page land in test-output/console/. Run one area:
// `npx vitest run test/e2e/console.test.ts -t jobs`.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe } from 'vitest';
import type { Browser } from 'playwright-core';
import { request } from '../../testkit/http';
import { launchBrowser } from '../../testkit/browser';
import { clustersScenarios } from '../console/clusters';
import type { ConsoleContext } from '../console/context';
import { groupsScenarios } from '../console/groups';
import { jobsScenarios } from '../console/jobs';
import { qualityScenarios } from '../console/quality';
import { schedulesScenarios } from '../console/schedules';
import { shellScenarios } from '../console/shell';
import { sqlScenarios } from '../console/sql';
import { startHarness, type Harness } from '../harness';

const ADMIN_KEY = `console-admin-${randomBytes(24).toString('hex')}`;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

let h: Harness;
let browser: Browser;

const ctx: ConsoleContext = {
  get h() {
    return h;
  },
  get browser() {
    return browser;
  },
  get consoleUrl() {
    return `${h.url.replace(/\/api\/v1$/, '')}/console/`;
  },
  adminKey: ADMIN_KEY,
  async open(hash, opts = {}) {
    const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 800 } });
    const key = opts.key ?? ADMIN_KEY;
    // The console keeps the credential in sessionStorage: put it there before the first script runs.
    await context.addInitScript({
      content: `sessionStorage.setItem('spark-orchestrator.credential', ${JSON.stringify(key)})`,
    });
    const page = await context.newPage();
    page.on('pageerror', (err) => console.error(`console page error: ${err.message}`));
    await page.goto(`${ctx.consoleUrl}#${hash}`);
    return page;
  },
  api: (method, path, body) => request(h.url, method, path, body, bearer(ADMIN_KEY)),
  async keyFor(role) {
    const r = await request(h.url, 'POST', '/auth/keys', { name: `console-${role}`, role }, bearer(ADMIN_KEY));
    if (r.status !== 200) throw new Error(`POST /auth/keys: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.key as string;
  },
};

beforeAll(async () => {
  [h, browser] = await Promise.all([
    startHarness({ env: { AUTH_MODE: 'on', AUTH_ADMIN_KEY: ADMIN_KEY } }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

describe('console shell', () => shellScenarios(ctx));
describe('console jobs', () => jobsScenarios(ctx));
describe('console groups', () => groupsScenarios(ctx));
describe('console schedules', () => schedulesScenarios(ctx));
describe('console sql', () => sqlScenarios(ctx));
describe('console clusters and overview', () => clustersScenarios(ctx));
// Last: it walks every page with the data the scenarios above left.
describe('console quality', () => qualityScenarios(ctx));
