import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { type FakeHandler, type FakeServer, startFakeServer } from '../fakes/fake-server.js';
import { artifactPath, launchBrowser } from '../helpers/browser.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { type RunningApp, startApp, watchCsp } from './support.js';

/*
 * Hostile text from upstreams (error bodies recorded in provider_status) and
 * from users (API key names) on the status and keys pages, in headless
 * Chromium. The pages are opened with the CSP bypassed, so that escaping
 * alone is tested: an unescaped handler or script would run and open a
 * dialog. Every hostile text must show literally and add no element.
 */

const PASSWORD = 'escaping test password';
const UPSTREAM_ERROR = '<img src=x onerror=alert("upstream")><script>alert("upstream script")</script>';
const RECORDED_ERRORS = {
  provider_01: '<img src=x onerror=alert(1)>',
  provider_04: '"><svg onload=alert(4)>',
};
/** Written straight to the database: the page must not trust what it reads there either. */
const STORED_ERROR = '</div></li></ul><script>alert("db")</script><iframe srcdoc="<script>alert(5)</script>"></iframe>';
const KEY_NAMES = [
  '<img src=x onerror=alert("key")>',
  '<script>alert("key script")</script>',
  '"><svg onload=alert("key attr")>',
  '\' autofocus onfocus=\'alert("key single")',
  '<a href="javascript:alert(1)">click</a> &amp; &lt;b&gt;',
];
const HOSTILE_TAGS = 'img, svg, script:not([nonce]), iframe, a[href^="javascript"]';

/** Collects dialogs (alert and friends) a page opens, and dismisses them. */
function watchDialogs(page: Page): string[] {
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return dialogs;
}

describe('hostile provider and user text, escaped on the status and keys pages', () => {
  let db: TestDatabase;
  let upstream: FakeServer;
  let server: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    db = await createTestDatabase();
    // An engine whose every answer is a 502 with markup in its error body.
    const hostile: FakeHandler = () => ({ status: 502, body: UPSTREAM_ERROR });
    upstream = await startFakeServer(new Proxy({} as Record<string, FakeHandler>, { get: () => hostile }));
    server = await startApp(db, {
      MOJEEK_API_KEY: 'mojeek-key',
      MOJEEK_BASE_URL: upstream.url,
      BRAVE_API_KEY: 'brave-key',
      BRAVE_BASE_URL: upstream.url,
      MARGINALIA_API_KEY: 'marginalia-key',
      STAAN_API_KEY: 'staan-key',
    });
    const operator = await createUser(db.pool, { username: 'operator', password: PASSWORD });
    browser = await launchBrowser();

    // provider_02 (Mojeek) fails for real, through a search
    const { key } = await issueApiKey(db.pool, operator.id, 'search');
    const res = await fetch(`${server.base}/api/v1/web/?q=hostile&engine=provider_02`, {
      headers: { authorization: `Api-Key ${key}` },
    });
    expect(res.status).toBe(502);
    // two more recorded by the recorder, as any failure would be
    for (const [provider, error] of Object.entries(RECORDED_ERRORS)) {
      server.app.health.recorder.record({
        provider: provider as 'provider_01',
        ok: false,
        error,
        latencyMs: 5,
        source: 'query',
      });
    }
    await server.app.health.recorder.flush();
    await db.pool.query(
      `INSERT INTO provider_status (provider, ok, source, last_error, checked_at) VALUES ('provider_03', false, 'query', $1, now())
       ON CONFLICT (provider) DO UPDATE SET ok = false, last_error = $1, checked_at = now()`,
      [STORED_ERROR],
    );
    await new Promise((r) => setTimeout(r, 250)); // the status reader's cache
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await upstream?.close();
    await db?.drop();
  });

  async function signedInContext(): Promise<{ context: BrowserContext; page: Page; dialogs: string[] }> {
    // CSP bypassed: only the escaping stands between the text and the DOM
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    const dialogs = watchDialogs(page);
    await page.goto(`${server.base}/login`);
    await page.fill('#username', 'operator');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${server.base}/status`), page.click('button[type=submit]')]);
    return { context, page, dialogs };
  }

  it('shows upstream error text literally on the status page: no element added, no script run', async () => {
    const { context, page, dialogs } = await signedInContext();
    const errorOf = (slug: string) => page.locator(`#provider-${slug} .error-text`).textContent();
    expect(await errorOf('provider_02')).toContain(UPSTREAM_ERROR);
    expect(await errorOf('provider_01')).toContain(RECORDED_ERRORS.provider_01);
    expect(await errorOf('provider_04')).toContain(RECORDED_ERRORS.provider_04);
    expect(await errorOf('provider_03')).toContain(STORED_ERROR);
    expect(await page.locator(`main ${HOSTILE_TAGS.split(', ').join(', main ')}`).count()).toBe(0);
    // the list is whole: the stored </li></ul> did not end it early
    expect(await page.locator('ul.providers > li.provider').count()).toBeGreaterThanOrEqual(5);
    await page.waitForTimeout(300);
    expect(dialogs).toEqual([]);
    expect(await page.evaluate<number>('document.querySelectorAll("script").length')).toBe(0);
    await page.screenshot({ path: artifactPath('security-status-hostile.png'), fullPage: true });
    await context.close();
  });

  it('shows hostile key names literally when created, listed and revoked: no element added, no script run', async () => {
    const { context, page, dialogs } = await signedInContext();
    await page.goto(`${server.base}/settings/keys`);
    for (const name of KEY_NAMES) {
      await page.fill('#key-name', name);
      await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Create key")')]);
      expect(await page.locator('#new-key h2').textContent()).toBe(`Your new key “${name}”`);
      await page.focus('#new-key-value');
    }
    await page.goto(`${server.base}/settings/keys`);
    const cells = await page.locator('table.keys tbody tr td:first-child').allTextContents();
    for (const name of KEY_NAMES) expect(cells).toContain(name);
    expect(await page.locator(`main ${HOSTILE_TAGS.split(', ').join(', main ')}`).count()).toBe(0);

    // revoking shows the name in the notice, literally too
    const row = page.locator('table.keys tbody tr', { hasText: KEY_NAMES[0]! });
    await Promise.all([page.waitForLoadState('load'), row.locator('button:has-text("Revoke")').click()]);
    expect(await page.locator('.notice').textContent()).toContain(`("${KEY_NAMES[0]}")`);
    expect(await page.locator(`main ${HOSTILE_TAGS.split(', ').join(', main ')}`).count()).toBe(0);
    await page.waitForTimeout(300);
    expect(dialogs).toEqual([]);
    await page.screenshot({ path: artifactPath('security-keys-hostile.png'), fullPage: true });
    await context.close();
  });

  it('also holds under the real CSP, with no violation reported (nothing hostile even tried to run)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const dialogs = watchDialogs(page);
    const csp = await watchCsp(page);
    await page.goto(`${server.base}/login?next=/settings/keys`);
    await page.fill('#username', 'operator');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${server.base}/settings/keys`), page.click('button[type=submit]')]);
    expect(await csp.violations()).toEqual([]);
    await page.goto(`${server.base}/status`);
    await page.waitForTimeout(300);
    expect(await csp.violations()).toEqual([]);
    expect(dialogs).toEqual([]);
    await context.close();
  });
});
