import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/auth/users.js';
import type { ProviderSlug } from '../../src/providers/types.js';
import { WebClient } from '../auth/web-client.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { artifactPath, launchBrowser } from '../helpers/browser.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { seedProviderHistory } from '../helpers/provider-history.js';
import { listen } from '../helpers/server.js';

/*
 * The /status page for signed-in operators: access rules, what each row
 * says, the history bars, and a look in a real browser.
 */

const PASSWORD = 'status page password';
const ENV = { BRAVE_API_KEY: 'brave-key', MOJEEK_API_KEY: 'mojeek-key', PROBE_INTERVAL_SECONDS: '0' };

async function observe(t: TestApp, provider: ProviderSlug, ok: boolean, error = '') {
  t.app.health.recorder.record({ provider, ok, error, latencyMs: 40, source: 'query' });
  await t.app.health.recorder.flush();
}

describe('/status page', () => {
  let db: TestDatabase;
  let t: TestApp;
  let base: string;
  /** The UTC days the seeded history and the live failure fall on (two, or three just after midnight). */
  let failingDays: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, ENV);
    base = await listen(t.app);
    await createUser(db.pool, { username: 'operator', password: PASSWORD });
    const { failedHours } = await seedProviderHistory(db.pool);
    const day = (d: Date) => d.toISOString().slice(0, 10);
    failingDays = new Set([...failedHours.map(day), day(new Date())]).size;
    await observe(t, 'provider_01', true);
    await observe(t, 'provider_02', false, 'HTTP 503: Mojeek is having a moment');
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  it('sends anonymous visitors to the sign-in page with next=/status', async () => {
    for (const path of ['/status', '/status/']) {
      const res = await new WebClient(base).get(path);
      expect(res.status, path).toBe(302);
      const location = new URL(res.headers.get('location')!, base);
      expect(location.pathname).toBe('/login');
      expect(location.searchParams.get('next')).toBe(path);
    }
  });

  it('shows signed-in users every configured provider, grouped, with state, how it is checked, and the last error', async () => {
    const client = new WebClient(base);
    await client.signIn('operator', PASSWORD);
    const page = await client.get('/status');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = page.text;
    expect(html).toContain('1 provider down');
    for (const label of ['Search engines', 'Media &amp; news', 'Knowledge panels', 'Instant answers', 'Maps']) {
      expect(html).toContain(label);
    }
    // translate is not configured (no LIBRETRANSLATE_URL): no group, no row
    expect(html).not.toContain('Translation');
    expect(html).not.toContain('id="provider-translate"');
    expect(html).not.toContain('id="provider-provider_03"');

    const row = (slug: string) => {
      const start = html.indexOf(`id="provider-${slug}"`);
      expect(start, slug).toBeGreaterThan(0);
      return html.slice(start, html.indexOf('</li>', start));
    };
    expect(row('provider_02')).toContain('data-state="down"');
    expect(row('provider_02')).toContain('>Down<');
    expect(row('provider_02')).toContain('HTTP 503: Mojeek is having a moment');
    expect(row('provider_02')).toContain('never seen');
    expect(row('provider_01')).toContain('>Operational<');
    expect(row('provider_01')).toMatch(
      /<time datetime="[^"]+Z" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">just now<\/time>/,
    );
    expect(row('provider_01')).toContain('Observed from searches');
    expect(row('provider_13')).toContain('Active check');
    expect(row('provider_13')).toContain('>Unknown<');
    expect(row('provider_13')).toContain('not yet');
  });

  it('draws 30 daily and 24 hourly bars with the failure counts on hover', async () => {
    const client = new WebClient(base);
    await client.signIn('operator', PASSWORD);
    const html = (await client.get('/status/')).text;
    const start = html.indexOf('id="provider-provider_02"');
    const row = html.slice(start, html.indexOf('</li>', start));
    const daily = row.slice(row.indexOf('class="bars daily"'), row.indexOf('class="bars hourly"'));
    const hourly = row.slice(row.indexOf('class="bars hourly"'));
    expect(daily.match(/<span class="(ok|partial|bad|none)"/g)).toHaveLength(30);
    expect(hourly.match(/<span class="(ok|partial|bad|none)"/g)).toHaveLength(24);
    expect(hourly).toContain('85.0% available, 3 failures in 20 calls');
    expect(daily).toContain('0% available, 4 failures in 4 calls');
    expect(row).toMatch(new RegExp(`aria-label="Last 30 days: [\\d.]+% available; ${failingDays} days with failures"`));
  });

  it('shows all operational once nothing is down', async () => {
    await observe(t, 'provider_02', true);
    const client = new WebClient(base);
    await client.signIn('operator', PASSWORD);
    const html = (await client.get('/status')).text;
    expect(html).toContain('All systems operational');
    await observe(t, 'provider_02', false, 'HTTP 503: Mojeek is having a moment');
  });

  it('renders in headless Chromium: sign in, see the down provider and its error (screenshot saved)', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(`${base}/status`);
      expect(new URL(page.url()).pathname).toBe('/login');
      await page.fill('#username', 'operator');
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(`${base}/status`), page.click('button[type=submit]')]);
      const down = page.locator('#provider-provider_02');
      await expect(down.locator('.badge').textContent()).resolves.toBe('Down');
      await expect(down.locator('.error-text').textContent()).resolves.toContain('HTTP 503: Mojeek is having a moment');
      await expect(page.locator('#summary h2').textContent()).resolves.toBe('1 provider down');
      // no external assets: every request stayed on this origin
      const origins = await page.evaluate(() =>
        performance.getEntriesByType('resource').map((e) => new URL(e.name).origin),
      );
      expect(origins.filter((o) => o !== base)).toEqual([]);
      await page.screenshot({ path: artifactPath('status-page.png'), fullPage: true });

      const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
      await phone.context().addCookies(await page.context().cookies());
      await phone.goto(`${base}/status`);
      const overflow = await phone.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      await phone.screenshot({ path: artifactPath('status-page-phone.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});

describe('STATUS_PAGE_ENABLED=false', () => {
  let db: TestDatabase;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, { ...ENV, STATUS_PAGE_ENABLED: 'false' });
    base = await listen(t.app);
    await createUser(db.pool, { username: 'operator', password: PASSWORD });
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  it('answers 404 for /status, signed in or not, and hides the link', async () => {
    expect((await new WebClient(base).get('/status')).status).toBe(404);
    const client = new WebClient(base);
    await client.signIn('operator', PASSWORD);
    expect((await client.get('/status')).status).toBe(404);
    expect((await client.get('/status/')).status).toBe(404);
    const keys = await client.get('/settings/keys');
    expect(keys.status).toBe(200);
    expect(keys.text).not.toContain('href="/status"');
  });

  it('still records and serves health to monitors', async () => {
    await observe(t, 'provider_01', false, 'x');
    const res = await fetch(`${base}/status/health/provider_01`);
    expect(res.status).toBe(500);
  });
});
