// The console's OIDC sign-in end to end in headless Chromium: the API (authentication on, no worker) trusts a
// tiny identity provider (testkit/oidc-provider.ts), advertises it at GET /auth/config, and the sign-in page's
// "Sign in with <host>" button runs the authorization-code flow with PKCE; the access token then signs every
// call. Also: a tampered `state` and an unknown client are refused with the reason.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../../testkit/browser';
import { startTestIdentityProvider, type TestIdentityProvider } from '../../testkit/oidc-provider';
import { startHarness, type Harness } from '../harness';

const ADMIN_KEY = `console-oidc-admin-${randomBytes(24).toString('hex')}`;

let h: Harness;
let idp: TestIdentityProvider;
let browser: Browser;
const consoleUrl = () => `${h.url.replace(/\/api\/v1$/, '')}/console/`;

async function signInPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('pageerror', (err) => console.error(`console page error: ${err.message}`));
  await page.goto(`${consoleUrl()}#/clusters`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  return page;
}

beforeAll(async () => {
  idp = await startTestIdentityProvider();
  [h, browser] = await Promise.all([
    startHarness({
      worker: false,
      env: {
        AUTH_MODE: 'on',
        AUTH_ADMIN_KEY: ADMIN_KEY,
        OIDC_ISSUER: idp.issuer,
        OIDC_JWKS_URL: idp.jwksUrl,
        OIDC_AUDIENCE: idp.audience,
        OIDC_CONSOLE_CLIENT_ID: idp.clientId,
      },
    }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await idp?.close();
});

describe('console OIDC sign-in', () => {
  it('GET /auth/config is public and names the issuer and the console client id', async () => {
    const res = await fetch(`${h.url}/auth/config`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      authentication: 'on',
      oidc: { issuer: idp.issuer, clientId: idp.clientId },
    });
    const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { security: unknown[] } }>;
    };
    expect(doc.paths['/api/v1/auth/config'].get.security).toEqual([]);
    // The console page allows its scripts to call the issuer (discovery, token endpoint).
    const index = await fetch(consoleUrl());
    expect(index.headers.get('content-security-policy')).toContain(idp.issuer);
  });

  it('signs in through the identity provider with PKCE and uses the access token', async () => {
    idp.user = { sub: 'olga', roles: ['operator'] };
    const page = await signInPage();
    const button = page.getByRole('button', { name: `Sign in with ${new URL(idp.issuer).host}` });
    await button.waitFor();
    await screenshot(page, 'sign-in-oidc');
    const before = idp.tokenRequests.length;
    await button.click();
    // Back from the identity provider: signed in, on the page the sign-in started from.
    await page.getByRole('navigation', { name: 'sections' }).waitFor({ timeout: 20_000 });
    expect(await page.locator('.who .role').textContent()).toBe('operator');
    expect(await page.locator('.who').textContent()).toContain('oidc:olga');
    await page.getByRole('heading', { name: 'Clusters' }).waitFor();
    const auth = idp.authorizeRequests[idp.authorizeRequests.length - 1];
    expect(auth.get('code_challenge_method')).toBe('S256');
    expect(auth.get('redirect_uri')).toBe(consoleUrl());
    expect(idp.tokenRequests.slice(before)).toEqual([{ ok: true }]);
    // The code and state are gone from the address bar; the verifier is not kept.
    expect(page.url()).toBe(`${consoleUrl()}#/clusters`);
    const stored = await page.evaluate('JSON.stringify(sessionStorage)');
    expect(stored).not.toContain('oidc-pending');
    // The token signs API calls: the clusters list loads (a viewer-level read) and a write needs admin.
    await page.getByRole('table', { name: 'clusters' }).getByRole('link', { name: 'default' }).waitFor();
    expect(await page.getByRole('button', { name: 'New cluster' }).count()).toBe(0);
    await page.context().close();
  });

  it('renews a short-lived access token, before it expires and when the service refuses it, until the issuer says no', async () => {
    idp.user = { sub: 'rita', roles: ['viewer'] };
    // Tokens the API accepts for about 4 s (it allows 30 s of clock skew).
    Object.assign(idp, { tokenLifetimeS: 4, backdateS: 30, refuseRefresh: false });
    try {
      const page = await signInPage();
      await page.getByRole('button', { name: /Sign in with/ }).click();
      await page.getByRole('navigation', { name: 'sections' }).waitFor({ timeout: 20_000 });
      const clustersLoad = async () => {
        await page.goto(`${consoleUrl()}#/jobs`);
        await page.goto(`${consoleUrl()}#/clusters`);
        await page.getByRole('table', { name: 'clusters' }).getByRole('link', { name: 'default' }).waitFor();
        expect(await page.getByRole('heading', { name: 'Sign in' }).count()).toBe(0);
      };
      // Renewed ahead of expiry (at 80 % of the lifetime): still signed in after two lifetimes.
      const before = idp.refreshRequests.length;
      await page.waitForTimeout(9_000);
      expect(idp.refreshRequests.slice(before).filter((r) => r.ok).length).toBeGreaterThanOrEqual(2);
      await clustersLoad();

      // After a reload the expiry is unknown: the refused call is renewed and made again.
      await page.reload();
      await page.getByRole('navigation', { name: 'sections' }).waitFor();
      const afterReload = idp.refreshRequests.length;
      await page.waitForTimeout(5_000);
      await clustersLoad();
      expect(idp.refreshRequests.slice(afterReload)).toContainEqual({ ok: true });

      // The issuer ends the session: the next refused call signs out, and says why.
      idp.refuseRefresh = true;
      await page.waitForTimeout(5_000);
      await page.goto(`${consoleUrl()}#/jobs`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor({ timeout: 20_000 });
      await page
        .getByRole('alert')
        .filter({ hasText: /signed out/ })
        .waitFor();
      expect(idp.refreshRequests.at(-1)).toEqual({ ok: false, why: 'the session has ended' });
      expect(await page.evaluate('JSON.stringify(sessionStorage)')).not.toContain('oidc-refresh');
      await page.context().close();
    } finally {
      Object.assign(idp, { tokenLifetimeS: 600, backdateS: 0, refuseRefresh: false });
    }
  });

  it('refuses an answer whose state does not match, and says why', async () => {
    const page = await signInPage();
    // The identity provider's redirect back, with the state changed on the way.
    const authorize = `${idp.issuer}/authorize?*`;
    await page.route(authorize, async (route) => {
      const real = await route.fetch({ maxRedirects: 0 });
      const back = new URL(real.headers().location);
      back.searchParams.set('state', 'forged');
      await route.fulfill({ status: 302, headers: { location: back.toString() } });
    });
    const tokenRequests = idp.tokenRequests.length;
    await page.getByRole('button', { name: /Sign in with/ }).click();
    await page.getByRole('alert').filter({ hasText: /state/ }).waitFor({ timeout: 20_000 });
    await page.unroute(authorize);
    expect(await page.getByRole('navigation', { name: 'sections' }).count()).toBe(0);
    expect(page.url()).not.toContain('code=');
    // The code was never taken to the token endpoint.
    expect(idp.tokenRequests.length).toBe(tokenRequests);
    await page.context().close();
  });

  it('shows the identity provider’s refusal', async () => {
    const page = await signInPage();
    await page.goto(`${consoleUrl()}?error=access_denied&error_description=the+user+said+no&state=x#/`);
    await page.getByRole('alert').filter({ hasText: 'the user said no' }).waitFor();
    await page.context().close();
  });
});
