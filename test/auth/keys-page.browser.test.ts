import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/auth/users.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { artifactPath, launchBrowser, signInToKeysPage, submitSignInForm } from '../helpers/browser.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

const ALICE = { username: 'alice', password: 'correct horse battery' };

describe('API keys in a real browser', () => {
  let db: TestDatabase;
  let t: TestApp;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db);
    base = await listen(t.app);
    await createUser(db.pool, ALICE);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await db?.drop();
  });

  it('signs in, creates a key shown once, uses it on the API, revokes it, and the API then refuses it', async () => {
    const context = await browser.newContext({ javaScriptEnabled: true });
    const page = await context.newPage();

    await page.goto(`${base}/settings/keys`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await submitSignInForm(page, ALICE, () => page.waitForURL(`${base}/settings/keys`));
    expect(await page.textContent('h1')).toBe('API keys');

    await page.fill('input[name=name]', 'laptop');
    await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Create key")')]);
    const key = await page.inputValue('#new-key-value');
    expect(key).toMatch(/^svc_sk_[0-9a-f]{8}\.[A-Za-z0-9_-]{43}$/);
    expect(await page.isVisible('#copy-key')).toBe(true);
    expect(await page.textContent('#new-key')).toContain('shown only once');
    await page.setViewportSize({ width: 1100, height: 760 });
    await page.screenshot({ path: artifactPath('keys-page.png'), fullPage: true });

    const ok = await fetch(`${base}/api/v1/key/`, { headers: { authorization: `Api-Key ${key}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ name: 'laptop', prefix: key.slice(0, 15), revoked: false });

    await page.goto(`${base}/settings/keys`);
    expect(await page.content()).not.toContain(key);
    expect(await page.textContent('table.keys')).toContain(key.slice(0, 15));

    await Promise.all([page.waitForLoadState('load'), page.click(`button[aria-label="Revoke ${key.slice(0, 15)}"]`)]);
    expect(await page.textContent('.notice')).toContain(`Revoked key ${key.slice(0, 15)}`);
    expect(await page.textContent('tr.revoked')).toContain('Revoked');
    await page.screenshot({ path: artifactPath('keys-page-revoked.png'), fullPage: true });

    const refused = await fetch(`${base}/api/v1/key/`, { headers: { authorization: `Api-Key ${key}` } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ detail: 'Invalid or revoked API key.' });

    await Promise.all([page.waitForURL(`${base}/login`), page.click('button:has-text("Sign out")')]);
    await page.goto(`${base}/settings/keys`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await context.close();
  });

  it('works without JavaScript: sign in and create a key through plain forms', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await signInToKeysPage(page, base, ALICE);
    await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Create key")')]);
    expect(await page.inputValue('#new-key-value')).toMatch(/^svc_sk_/);
    expect(await page.isVisible('#copy-key')).toBe(false);
    await page.screenshot({ path: artifactPath('login-nojs-keys.png'), fullPage: true });
    await context.close();
  });

  it('shows the sign-in form cleanly, with a generic error after a failed attempt', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/login`);
    await submitSignInForm(page, { ...ALICE, password: 'wrong password' }, () => page.waitForLoadState('load'));
    expect(await page.textContent('[role=alert]')).toContain('Please enter a correct username and password');
    expect(await page.inputValue('input[name=username]')).toBe('alice');
    expect(await page.inputValue('input[name=password]')).toBe('');
    await page.screenshot({ path: artifactPath('login-failed.png') });
    await page.close();
  });
});
