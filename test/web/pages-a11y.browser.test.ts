import axe from 'axe-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey, revokeApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { artifactPath, launchBrowser, signInToKeysPage, submitSignInForm } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { seedProviderHistory } from '../helpers/provider-history.js';
import { listen } from '../helpers/server.js';

/*
 * The pages in Chromium, checked by axe-core with all its default rules (WCAG A and AA and the best
 * practices), in demo mode so that the layout's banner is on the page too; and the keys page at a
 * phone's width (390 px): no horizontal scrolling, the Revoke button on screen.
 */

interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: unknown[] }[];
}

/** axe-core's violations on the page as it is now (axe injected through the DevTools protocol, past the CSP). */
async function violations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const found = await page.evaluate(async () => {
    const run = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe.run;
    return (await run()).violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.target) }));
  });
  return found.map((v) => `${v.id} (${v.help}): ${JSON.stringify(v.nodes)}`);
}

/** The width of the page's content, in CSS pixels (wider than the viewport when it scrolls sideways). */
const pageWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');

const ALICE = { username: 'alice', password: 'correct horse battery' };

describe('pages in a real browser', () => {
  let db: TestDatabase;
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, { DEMO_MODE: 'true', BRAVE_API_KEY: 'brave-key', MOJEEK_API_KEY: 'mojeek-key' });
    base = await listen(t.app);
    const user = await createUser(db.pool, ALICE);
    await issueApiKey(db.pool, user.id, 'a laptop with a rather long name');
    const revoked = await issueApiKey(db.pool, user.id, 'old phone');
    await revokeApiKey(db.pool, revoked.id, user.id);
    // A status page with something to show: history bars of every level, a provider failing now.
    await seedProviderHistory(db.pool);
    for (const [provider, ok] of [
      ['provider_01', true],
      ['provider_02', false],
    ] as const) {
      t.app.health.recorder.record({
        provider,
        ok,
        error: ok ? '' : 'HTTP 503: upstream down',
        latencyMs: 40,
        source: 'query',
      });
    }
    await t.app.health.recorder.flush();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await db?.drop();
  });

  it.each(['light', 'dark'] as const)(
    'has no axe-core violation on /login, /status and /settings/keys (%s)',
    async (colorScheme) => {
      const context = await browser.newContext({ colorScheme });
      const page = await context.newPage();
      await page.goto(`${base}/login`);
      expect(await page.isVisible('.demo-banner')).toBe(true);
      expect(await violations(page), '/login').toEqual([]);
      await submitSignInForm(page, { ...ALICE, password: 'wrong password' }, () => page.waitForURL(`${base}/login`));
      await page.waitForSelector('[role=alert]');
      expect(await violations(page), '/login after a failed attempt').toEqual([]);

      await signInToKeysPage(page, base, ALICE);
      expect(await page.isVisible('table.keys')).toBe(true);
      expect(await violations(page), '/settings/keys').toEqual([]);
      await page.fill('input[name=name]', 'desktop');
      await page.click('button:has-text("Create key")');
      await page.waitForSelector('#new-key');
      expect(await violations(page), '/settings/keys with a new key').toEqual([]);

      await page.goto(`${base}/status`);
      expect(await page.isVisible('.provider')).toBe(true);
      expect(await page.textContent('#provider-provider_02')).toContain('HTTP 503: upstream down');
      expect(await page.locator('.bars span.partial').count()).toBeGreaterThan(0);
      expect(await violations(page), '/status').toEqual([]);
      await context.close();
    },
  );

  it('axe-core finds what it should: an unlabelled field is a violation', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/login`);
    await page.evaluate("document.querySelector('label[for=username]').remove()");
    expect((await violations(page)).some((v) => v.startsWith('label '))).toBe(true);
    await page.close();
  });

  it('keeps the keys and status pages within a 390 px wide phone screen, Revoke buttons included', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await signInToKeysPage(page, base, ALICE);
    await page.screenshot({ path: artifactPath('keys-page-390.png'), fullPage: true });
    const width = await pageWidth(page);
    expect(width).toBeLessThanOrEqual(390);
    const buttons = await page.locator('button:has-text("Revoke")').all();
    expect(buttons.length).toBeGreaterThan(0);
    for (const revoke of buttons) {
      await revoke.scrollIntoViewIfNeeded();
      expect(await revoke.isVisible()).toBe(true);
      const box = (await revoke.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
    }
    await page.fill('input[name=name]', 'phone');
    await page.click('button:has-text("Create key")');
    await page.waitForSelector('#new-key');
    expect(await pageWidth(page), 'with a new key').toBeLessThanOrEqual(390);
    await page.goto(`${base}/status`);
    expect(await pageWidth(page), '/status').toBeLessThanOrEqual(390);
    await context.close();
  });
});
