// The Spark UI of a job through the API, end to end with authentication on: one real PySpark job (a stage
// that completes, one that fails, then it waits for the test to release it) read through the live proxy
// while it runs, then through a real Spark History Server after it ends; by a viewer, never anonymously;
// attacker spellings of the proxied paths; the console's job page with its stages summary in Chromium.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { DRIVER_FILES } from '../../activities/adapters/local/driver-files';
import { singleJobDriverId } from '../../domain/job';
import { loadConfig } from '../../lib/config';
import { historyServerCommand } from '../../scripts/history-server';
import { freePort } from '../../activities/adapters/local/sql-engine';
import { uiFilterClasses } from '../../activities/adapters/local/ui-filter';
import { launchBrowser, screenshot } from '../../testkit/browser';
import { call, eventually, form, startHarness, type Harness } from '../harness';

const ADMIN_KEY = `spark-ui-admin-${randomBytes(24).toString('hex')}`;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

const dir = path.join(inject('testDir'), `spark-ui-${randomBytes(4).toString('hex')}`);
const historyDir = path.join(dir, 'spark-history');
const release = path.join(dir, 'release');

// Two stages that complete (map, then the sum's result), one that fails on purpose, then a wait for the test.
const APP = `
import os, sys, time
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
sc = spark.sparkContext
print("SUM", sc.parallelize(range(1, 1001), 2).map(lambda x: x * x).sum())
try:
    sc.parallelize([1, 2], 2).map(lambda x: x // 0).collect()
except Exception:
    print("FAILED AS MEANT")
while not os.path.exists(sys.argv[1]):
    time.sleep(0.2)
`;

let h: Harness;
let browser: Browser;
let historyServer: ChildProcess | undefined;
let viewerKey: string;
let jobId: string;
let appId: string;

/** A request with the path exactly as written (fetch would resolve dot segments and %2e first). */
function raw(
  method: string,
  p: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const u = new URL(h.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: p, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Clicks a link of the console that opens a new tab and waits for that page; every response of it (the page,
 * Spark's static files) must be a success.
 */
async function followLink(page: Page, name: string): Promise<Page> {
  const failed: string[] = [];
  const note = (r: Response) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  };
  page.context().on('response', note);
  const [tab] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('link', { name }).click()]);
  // Both kinds of link redirect to the application's jobs page.
  await tab.waitForURL(/\/jobs\/$/);
  await tab.waitForLoadState('load');
  page.context().off('response', note);
  expect(failed).toEqual([]);
  return tab;
}

/** The status of a GET straight to a Spark UI's port on loopback, with these headers. */
function direct(port: number, p: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const asViewer = (p: string) => call(h, 'GET', p, undefined, bearer(viewerKey));
const getJob = async () => (await call(h, 'GET', `/job/${jobId}`, undefined, bearer(ADMIN_KEY))).body;

/** Listening sockets on `port` (IPv4 and IPv6 tables): every one must be on a loopback address. */
function listenersOn(port: number): string[] {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((c) => c[1]?.endsWith(hex) && c[3] === '0A')
      .map((c) => c[1].slice(0, -hex.length)),
  );
}
const LOOPBACK = new Set(['0100007F', '0000000000000000FFFF00000100007F', '00000000000000000000000001000000']);

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  const historyUrl = `http://127.0.0.1:${await freePort()}`;
  const env = {
    AUTH_MODE: 'on',
    AUTH_ADMIN_KEY: ADMIN_KEY,
    SPARK_HISTORY_URL: historyUrl,
    SPARK_HISTORY_DIR: historyDir,
  };
  const config = loadConfig({ ...process.env, ...env });
  const hs = historyServerCommand({
    config,
    runDir: dir,
    updateInterval: '1s',
    filterClasses: await uiFilterClasses(config.SPARK_HOME, config.STACK_DIR),
  });
  // Its log goes to a file, never to the test's output.
  const out = createWriteStream(path.join(dir, 'spark-history.log'));
  historyServer = spawn(hs.cmd, hs.args, { env: hs.env, stdio: ['ignore', 'pipe', 'pipe'] });
  historyServer.stdout?.pipe(out);
  historyServer.stderr?.pipe(out);
  [h, browser] = await Promise.all([startHarness({ env }), launchBrowser()]);
  const key = await call(h, 'POST', '/auth/keys', { name: 'spark-ui viewer', role: 'viewer' }, bearer(ADMIN_KEY));
  viewerKey = key.body.key;
});

afterAll(async () => {
  writeFileSync(release, '');
  await browser?.close();
  await h?.stop();
  historyServer?.kill('SIGTERM');
});

describe('the Spark UI through the API', () => {
  it('serves a running job’s live UI to a viewer: its stages, pages with links under the proxy, on loopback only', async () => {
    const r = await call(
      h,
      'POST',
      '/job/submit',
      form(
        { name: 'ui-stages', language: 'PYTHON', jobClass: 'stages', args: release },
        {
          pyFiles: [{ name: 'stages.py', content: APP }],
        },
      ),
      bearer(ADMIN_KEY),
    );
    expect(r.status).toBe(200);
    jobId = r.body.jobId;
    const running = await eventually(async () => {
      const j = await getJob();
      if (j.state === 'FAILED' || j.state === 'FINISHED') throw Object.assign(new Error(j.error), { fatal: true });
      return j.state === 'BUSY' && j.appId ? j : undefined;
    }, 120_000);
    appId = running.appId;
    expect(running.uiUrl).toBe(`/api/v1/job/${jobId}/ui/`);
    expect(running.historyUrl).toBeUndefined();

    // Spark's REST API through the proxy, as a viewer: the completed stages and the failed one.
    const stages = await eventually(async () => {
      const s = await asViewer(`/job/${jobId}/ui/api/v1/applications/${appId}/stages`);
      return s.status === 200 && s.body.some((x: { status: string }) => x.status === 'FAILED') ? s.body : undefined;
    }, 90_000);
    expect(stages.filter((x: { status: string }) => x.status === 'COMPLETE').length).toBeGreaterThanOrEqual(1);

    // The UI's root redirects within the proxy; its pages link under it.
    const page = await fetch(`${h.url}/job/${jobId}/ui/`, { headers: bearer(viewerKey) });
    expect(page.status).toBe(200);
    expect(page.url).toBe(`${h.url}/job/${jobId}/ui/jobs/`);
    const html = await page.text();
    expect(html).toContain(`href="/api/v1/job/${jobId}/ui/stages/"`);
    expect(page.headers.get('content-security-policy')).toMatch(/^sandbox /);
    // An id spelt with %-escapes (a scheduled job's `:` as %3A) keeps its spelling in Spark's links.
    const spelt = `%${jobId.charCodeAt(0).toString(16)}${jobId.slice(1)}`;
    const alt = await raw('GET', `/api/v1/job/${spelt}/ui/jobs/`, bearer(viewerKey));
    expect(alt.status).toBe(200);
    expect(alt.body).toContain(`href="/api/v1/job/${spelt}/ui/stages/"`);

    // The driver recorded its UI's port; Spark listens there on loopback and nowhere else.
    const ui = JSON.parse(
      readFileSync(path.join(h.config.DRIVER_DIR, singleJobDriverId(jobId, 1), DRIVER_FILES.ui), 'utf8'),
    );
    const listeners = listenersOn(ui.port);
    expect(listeners.length).toBeGreaterThan(0);
    expect(listeners.filter((a) => !LOOPBACK.has(a))).toEqual([]);
    // Straight at the port, a rebound DNS name or another site's page is refused by the UI's Host check.
    expect(await direct(ui.port, '/jobs/', { host: `127.0.0.1:${ui.port}` })).toBe(200);
    expect(await direct(ui.port, '/jobs/', { host: `localhost:${ui.port}` })).toBe(200);
    expect(await direct(ui.port, '/jobs/', { host: `attacker.example:${ui.port}` })).toBe(403);
    expect(await direct(ui.port, '/jobs/', { host: `127.0.0.1.attacker.example` })).toBe(403);
    expect(await direct(ui.port, '/jobs/', { host: `127.0.0.1:${ui.port}`, 'sec-fetch-site': 'cross-site' })).toBe(403);

    // The job can write into its folder: a file it rewrote to name another loopback port (here the History
    // Server's, which lists every application) is not followed; only the sealed one launch wrote is.
    const uiPath = path.join(h.config.DRIVER_DIR, singleJobDriverId(jobId, 1), DRIVER_FILES.ui);
    const sealed = readFileSync(uiPath, 'utf8');
    const hsPort = Number(new URL(h.config.SPARK_HISTORY_URL).port);
    try {
      for (const forged of [
        { ...ui, port: hsPort },
        { host: '127.0.0.1', port: hsPort },
      ]) {
        writeFileSync(uiPath, JSON.stringify(forged));
        const r = await raw('GET', `/api/v1/job/${jobId}/ui/api/v1/applications`, bearer(viewerKey));
        expect({ forged, status: r.status }).toEqual({ forged, status: 404 });
      }
    } finally {
      writeFileSync(uiPath, sealed);
    }
    expect((await raw('GET', `/api/v1/job/${jobId}/ui/jobs/`, bearer(viewerKey))).status).toBe(200);
  });

  it('refuses anonymous callers, other methods and every spelling that would leave the job’s UI', async () => {
    const base = `/api/v1/job/${jobId}/ui`;
    expect((await raw('GET', `${base}/jobs/`)).status).toBe(401);
    expect((await raw('GET', `/api/v1/job/${jobId}/history`)).status).toBe(401);
    const v = bearer(viewerKey);
    expect((await raw('POST', `${base}/jobs/`, v)).status).toBe(405);
    expect((await raw('DELETE', `${base}/jobs/`, v)).status).toBe(405);
    const attacks = [
      `${base}/../../auth/keys`,
      `${base}/%2e%2e/%2e%2e/auth/keys`,
      `${base}/%2E%2E%2Fauth%2Fkeys`,
      `${base}/..%2f..%2fauth`,
      `${base}/%252e%252e/x`,
      `${base}/.%2e/x`,
      `${base}/./jobs/`,
      `${base}//127.0.0.1:8233/`,
      `${base}/http://127.0.0.1:8233/`,
      `${base}/..\\..\\auth`,
      `${base}/..;/..;/auth/keys`,
      `${base}/jobs;x=1/`,
      `${base}/jobs/job/kill/?id=0`,
      `${base}/stages/stage/kill/?id=0`,
      `/api/v1/job/no-such-job/ui/jobs/`,
      `/api/v1/job/${jobId.toUpperCase()}/ui/jobs/`,
      `/api/v1/job/${encodeURIComponent('../auth')}/ui/`,
    ];
    for (const p of attacks) {
      const res = await raw('GET', p, v);
      expect({ p, status: res.status }).toEqual({ p, status: 404 });
    }
    // An absolute URL as the request target names no other server: Node reads only its path, so it is this
    // job's own page, never the named host's.
    const absolute = await raw('GET', `http://127.0.0.1:8233${base}/jobs/`, v);
    if (absolute.status === 200) expect(absolute.body).toContain(`href="${base}/stages/"`);
    else expect(absolute.status).toBe(404);
  });

  /** The console's page of the job, signed in as the viewer, once its stages summary shows the failed stage. */
  async function jobPageWithStages() {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript({
      content: `sessionStorage.setItem('spark-orchestrator.credential', ${JSON.stringify(viewerKey)})`,
    });
    const page = await context.newPage();
    await page.goto(`${h.url.replace(/\/api\/v1$/, '')}/console/#/jobs/${jobId}`);
    const summary = page.getByLabel('stages summary');
    await summary.getByText('Failed stages').waitFor({ timeout: 30_000 });
    expect(await summary.innerText()).toMatch(/Failed stages\s+1/);
    return page;
  }

  it('shows the stages summary and the UI link on the console’s job page', async () => {
    const page = await jobPageWithStages();
    expect(await page.getByRole('link', { name: 'Live Spark UI' }).getAttribute('href')).toBe(
      `/api/v1/job/${jobId}/ui/`,
    );
    await screenshot(page, 'job-spark-ui-live');
    // The link opens the driver's UI in a new tab (the console's session cookie stands in for the key there),
    // its static files load, and a link inside it works too.
    const ui = await followLink(page, 'Live Spark UI');
    expect(await ui.title()).toMatch(/Spark Jobs/);
    await ui.getByRole('link', { name: 'Stages', exact: true }).first().click();
    await ui.waitForURL(new RegExp(`/api/v1/job/${jobId}/ui/stages/$`));
    expect(await ui.title()).toMatch(/Stages/);
    await screenshot(ui, 'job-spark-ui-driver');
    // Another browser, never signed in: the same page is refused.
    const stranger = await browser.newContext();
    const refused = await (await stranger.newPage()).goto(`${h.url}/job/${jobId}/ui/jobs/`);
    expect(refused?.status()).toBe(401);
    await stranger.close();
    await page.context().close();

    // A cookie holds only while its key does: revoked, the next page answers 401.
    const other = await call(h, 'POST', '/auth/keys', { name: 'spark-ui revoked', role: 'viewer' }, bearer(ADMIN_KEY));
    const session = await raw('POST', '/api/v1/spark-ui/session', bearer(other.body.key));
    const cookie = String(session.headers['set-cookie']?.[0]).split(';')[0];
    expect(cookie).toMatch(/^spark_ui_session=/);
    expect((await raw('GET', `/api/v1/job/${jobId}/ui/jobs/`, { cookie })).status).toBe(200);
    // Not a credential for the REST API.
    expect((await raw('GET', `/api/v1/job/${jobId}`, { cookie })).status).toBe(401);
    await call(h, 'DELETE', `/auth/keys/${other.body.keyId}`, undefined, bearer(ADMIN_KEY));
    expect((await raw('GET', `/api/v1/job/${jobId}/ui/jobs/`, { cookie })).status).toBe(401);
  });

  it('serves the ended run from the History Server, and only that application', async () => {
    writeFileSync(release, '');
    const done = await eventually(async () => {
      const j = await getJob();
      return ['FINISHED', 'FAILED', 'CANCELED'].includes(j.state) ? j : undefined;
    }, 60_000);
    expect(done.state).toBe('FINISHED');
    expect(done.uiUrl).toBeUndefined();
    expect(done.historyUrl).toBe(`/api/v1/job/${jobId}/history/`);
    expect(existsSync(path.join(historyDir, `eventlog_v2_${appId}`))).toBe(true);
    // The live UI is gone; its answer says where the run is.
    expect((await asViewer(`/job/${jobId}/ui/jobs/`)).status).toBe(404);

    const stages = await eventually(async () => {
      const s = await asViewer(`/job/${jobId}/history/api/v1/applications/${appId}/stages`);
      return s.status === 200 ? s.body : undefined;
    }, 60_000);
    expect(stages.map((x: { status: string }) => x.status).sort()).toContain('FAILED');
    expect(stages.some((x: { status: string }) => x.status === 'COMPLETE')).toBe(true);

    const page = await fetch(`${h.url}/job/${jobId}/history`, { headers: bearer(viewerKey) });
    expect(page.status).toBe(200);
    expect(page.url).toBe(`${h.url}/job/${jobId}/history/history/${appId}/jobs/`);
    expect(await page.text()).toContain(`href="/api/v1/job/${jobId}/history/history/${appId}/stages/"`);

    // Nothing of the History Server but this job's application and the static files.
    const v = bearer(viewerKey);
    const root = await raw('GET', `/api/v1/job/${jobId}/history/`, v);
    expect([root.status, root.headers.location]).toEqual([302, `/api/v1/job/${jobId}/history/history/${appId}/jobs/`]);
    for (const p of [
      '/api/v1/applications',
      '/index.html',
      `/history/local-1/jobs/`,
      '/api/v1/version',
      '/logPage/?x=1',
    ]) {
      expect({ p, status: (await raw('GET', `/api/v1/job/${jobId}/history${p}`, v)).status }).toEqual({
        p,
        status: 404,
      });
    }
    expect((await raw('GET', `/api/v1/job/${jobId}/history/static/webui.css`, v)).status).toBe(200);
    // The static files are public: no spelling below them reaches an application's pages (Jetty reads `..;`
    // as `..`), nor one below this application's pages another application's.
    for (const [p, headers] of [
      [`/api/v1/job/${jobId}/history/static/..;/history/${appId}/jobs/`, {}],
      [`/api/v1/job/${jobId}/ui/static/..;/..;/api/v1/applications`, {}],
      [`/api/v1/job/${jobId}/history/history/${appId}/..;/..;/api/v1/applications`, v],
    ] as const) {
      expect({ p, status: (await raw('GET', p, headers)).status }).toEqual({ p, status: 404 });
    }
    // The History Server listens on loopback only, and checks Host as the drivers' UIs do.
    const hsPort = Number(new URL(h.config.SPARK_HISTORY_URL).port);
    expect(listenersOn(hsPort).filter((a) => !LOOPBACK.has(a))).toEqual([]);
    expect(await direct(hsPort, '/api/v1/applications', { host: `127.0.0.1:${hsPort}` })).toBe(200);
    expect(await direct(hsPort, '/api/v1/applications', { host: `rebound.attacker.example:${hsPort}` })).toBe(403);
  });

  it('links the history from the console’s page of the ended job, with its stages summary', async () => {
    const page = await jobPageWithStages();
    expect(await page.getByRole('link', { name: 'Spark History Server' }).getAttribute('href')).toBe(
      `/api/v1/job/${jobId}/history/`,
    );
    await screenshot(page, 'job-spark-ui-history');
    const history = await followLink(page, 'Spark History Server');
    expect(history.url()).toBe(`${h.url}/job/${jobId}/history/history/${appId}/jobs/`);
    expect(await history.title()).toMatch(/Spark Jobs/);
    await page.context().close();
  });
});
