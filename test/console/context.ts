// What the console's scenarios (test/console/*.ts) share, handed out by test/e2e/console.test.ts: one stack
// with authentication on (the bootstrap admin key), one Chromium, and helpers to open signed-in pages and to
// call the REST API as the admin.
import type { Browser, Page } from 'playwright-core';
import type { Reply } from '../../testkit/http';
import type { Harness } from '../harness';

export interface ConsoleContext {
  /** Set in beforeAll: read them inside `it`, not when the scenario registers its tests. */
  h: Harness;
  browser: Browser;
  /** http://127.0.0.1:<port>/console/ */
  consoleUrl: string;
  adminKey: string;
  /** A new browser page (own context, 1280×800 unless given), signed in with `key` (default: the admin key), at `#<hash>`. */
  open(hash: string, opts?: { key?: string; viewport?: { width: number; height: number } }): Promise<Page>;
  /** The REST API as the admin: fetch + JSON, `{status, body}`. */
  api(method: string, path: string, body?: unknown): Promise<Reply>;
  /** A new API key with `role`; returns the secret. */
  keyFor(role: 'viewer' | 'operator' | 'admin'): Promise<string>;
}
