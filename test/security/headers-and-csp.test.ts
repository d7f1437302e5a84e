import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/auth/users.js';
import { launchBrowser } from '../helpers/browser.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { type RunningApp, WebClient, computedStyle, startApp, watchCsp } from './support.js';

/*
 * Security headers: the HTML pages get helmet's set with a strict,
 * nonce-based Content-Security-Policy; the JSON endpoints only the cheap
 * nosniff. In headless Chromium the pages render and work with no CSP
 * violation, and an injected inline script is refused.
 */

const PASSWORD = 'headers test password';

function directives(csp: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of csp.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out.set(name.toLowerCase(), values);
  }
  return out;
}

describe('security headers of the HTML pages and the JSON endpoints', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let signedIn: WebClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db, { STATUS_MONITOR_TOKEN: 'monitor-token-for-headers' });
    await createUser(db.pool, { username: 'alice', password: PASSWORD });
    signedIn = new WebClient(server.base);
    expect((await signedIn.signIn('alice', PASSWORD)).status).toBe(302);
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('sends a strict nonce-based CSP with every page: nothing by default, no unsafe-inline or unsafe-eval, no framing', async () => {
    const pages = [
      await new WebClient(server.base).get('/login'),
      await signedIn.get('/settings/keys'),
      await signedIn.get('/status'),
    ];
    for (const page of pages) {
      expect(page.status).toBe(200);
      const csp = page.headers.get('content-security-policy') ?? '';
      const d = directives(csp);
      expect(d.get('default-src'), csp).toEqual(["'none'"]);
      expect(d.get('frame-ancestors'), csp).toEqual(["'none'"]);
      expect(d.get('base-uri'), csp).toEqual(["'none'"]);
      expect(d.get('form-action'), csp).toEqual(["'self'"]);
      expect(d.get('object-src') ?? d.get('default-src')).toEqual(["'none'"]);
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(csp).not.toMatch(/\*|https?:|data:/);
      // scripts and styles: only this response's nonce
      const [scriptSrc] = d.get('script-src') ?? [];
      const [styleSrc] = d.get('style-src') ?? [];
      expect(d.get('script-src')).toHaveLength(1);
      expect(d.get('style-src')).toHaveLength(1);
      expect(scriptSrc).toMatch(/^'nonce-[0-9a-f]{32}'$/);
      expect(styleSrc).toMatch(/^'nonce-[0-9a-f]{32}'$/);
      // every inline block carries the nonce of this response, and there are no inline handlers
      const styleNonce = styleSrc!.slice(7, -1);
      const styles = page.text.match(/<style[^>]*>/g) ?? [];
      expect(styles.length).toBeGreaterThan(0);
      for (const tag of styles) expect(tag).toBe(`<style nonce="${styleNonce}">`);
      for (const tag of page.text.match(/<script[^>]*>/g) ?? []) {
        expect(tag).toBe(`<script nonce="${scriptSrc!.slice(7, -1)}">`);
      }
      expect(page.text).not.toMatch(/\son[a-z]+\s*=/i);
      expect(page.text).not.toMatch(/\sstyle\s*=/i);

      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('referrer-policy')).toBe('same-origin');
      expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(page.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('draws a fresh nonce for every response', async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const page = await new WebClient(server.base).get('/login');
      nonces.add(/'nonce-([0-9a-f]+)'/.exec(page.headers.get('content-security-policy') ?? '')![1]!);
    }
    expect(nonces.size).toBe(5);
  });

  it('sends the same headers on the pages’ redirects and error answers (forged form, sign-in wall)', async () => {
    const forged = await new WebClient(server.base).post('/login', { _csrf: 'forged', username: 'a', password: 'b' });
    expect(forged.status).toBe(403);
    const wall = await new WebClient(server.base).get('/settings/keys');
    expect(wall.status).toBe(302);
    for (const res of [forged, wall]) {
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  it('gives JSON endpoints nosniff only: no CSP or other page headers on the API, the health endpoints or a 404', async () => {
    const responses = [
      await fetch(`${server.base}/api/v1/`),
      await fetch(`${server.base}/status/health?token=monitor-token-for-headers`),
      await fetch(`${server.base}/no/such/page`),
    ];
    for (const res of responses) {
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBeNull();
      expect(res.headers.get('strict-transport-security')).toBeNull();
      expect(res.headers.get('cross-origin-opener-policy')).toBeNull();
    }
  });
});

describe('the pages under their CSP in headless Chromium', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db);
    await createUser(db.pool, { username: 'alice', password: PASSWORD });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });

  it('signs in, creates a key (copy button shown by the page script), opens the status page: styled, working, no violation', async () => {
    const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const csp = await watchCsp(page);

    await page.goto(`${server.base}/login?next=/settings/keys`);
    // the layout's nonce'd stylesheet applies (a blocked one leaves the header a plain block)
    expect(await computedStyle(page, 'header.top', 'display')).toBe('flex');
    expect(await csp.violations()).toEqual([]);
    await page.fill('#username', 'alice');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${server.base}/settings/keys`), page.click('button[type=submit]')]);
    expect(await csp.violations()).toEqual([]);

    await page.fill('#key-name', 'browser key');
    await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Create key")')]);
    const key = await page.inputValue('#new-key-value');
    expect(key).toMatch(/^svc_sk_/);
    // the nonce'd inline script ran: it reveals the copy button and copies the key
    expect(await page.isVisible('#copy-key')).toBe(true);
    await page.click('#copy-key');
    await expect.poll(() => page.textContent('#copy-key')).toBe('Copied');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    // and selects the key on focus (formerly an inline onfocus handler)
    await page.focus('#new-key-value');
    const selection = await page.evaluate<number[]>(
      "(() => { const input = document.getElementById('new-key-value'); return [input.selectionStart, input.selectionEnd]; })()",
    );
    expect(selection).toEqual([0, key.length]);
    expect(await csp.violations()).toEqual([]);

    await page.goto(`${server.base}/status`);
    expect(await page.textContent('h1')).toBe('Provider status');
    // status.eta's own nonce'd stylesheet applies too
    expect(await computedStyle(page, '.status-head', 'display')).toBe('flex');
    expect(await csp.violations()).toEqual([]);

    await Promise.all([page.waitForURL(`${server.base}/login`), page.click('button:has-text("Sign out")')]);
    expect(await csp.violations()).toEqual([]);
    await context.close();
  });

  it('refuses an injected inline script, inline handler and foreign stylesheet, and reports each', async () => {
    const page = await browser.newPage();
    const csp = await watchCsp(page);
    await page.goto(`${server.base}/login`);
    const ran = await page.evaluate<string[]>(`(async () => {
      window.__ran = [];
      const script = document.createElement('script');
      script.textContent = 'window.__ran.push("inline script")';
      document.body.append(script);
      const img = document.createElement('img');
      img.setAttribute('onerror', 'window.__ran.push("inline handler")');
      img.src = 'data:,not-an-image';
      document.body.append(img);
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = 'https://evil.example/x.css';
      document.head.append(link);
      await new Promise((r) => setTimeout(r, 300));
      return window.__ran;
    })()`);
    expect(ran).toEqual([]);
    const reported = (await csp.violations()).join('\n');
    expect(reported).toMatch(/script-src/);
    expect(reported).toMatch(/img-src|default-src/);
    expect(reported).toMatch(/style-src/);
    await page.close();
  });
});
