import { Writable } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { loggerOptions } from '../../src/runtime/logging.js';
import { type FakeHandler, type FakeRequest, type FakeServer, startFakeServer } from '../fakes/fake-server.js';
import { testConfig } from '../helpers/app.js';
import type { TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

export { WebClient } from '../auth/web-client.js';

/** Every line the app logs, at trace level, through the production logger options (redaction included). */
export interface LogCapture {
  logger: FastifyBaseLogger;
  /** All lines so far, as written. */
  text(): string;
  lines(): string[];
}

export function captureLogs(
  extra: pino.LoggerOptions = {},
  settings: { LOG_LEVEL?: 'trace' | 'debug' | 'info' | 'warn'; LOG_QUERIES?: boolean } = {},
): LogCapture {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const options = loggerOptions({ LOG_LEVEL: 'trace', ...settings }) as pino.LoggerOptions;
  const logger = pino({ ...options, transport: undefined, ...extra }, sink) as unknown as FastifyBaseLogger;
  return {
    logger,
    text: () => text,
    lines: () => text.split('\n').filter(Boolean),
  };
}

export interface RunningApp {
  app: FastifyInstance;
  base: string;
  close(): Promise<void>;
}

/** The real app on a loopback port, with its own pool; `logger` false unless given. */
export async function startApp(
  db: TestDatabase,
  env: Record<string, string> = {},
  logger: FastifyBaseLogger | false = false,
): Promise<RunningApp> {
  const pool = createPool(db.url, { max: 10 });
  const app = await buildApp(testConfig(db, { LOG_LEVEL: logger ? 'trace' : 'silent', ...env }), { pool, logger });
  const base = await listen(app);
  return {
    app,
    base,
    async close() {
      await app.close();
      await pool.end();
    },
  };
}

/** The request as an upstream saw it: credential-bearing headers first, then the URL, then the body. */
export function echoText(req: FakeRequest): string {
  const plain = new Set(['host', 'connection', 'accept', 'accept-encoding', 'content-length', 'content-type']);
  const headers = Object.entries(req.headers)
    .filter(([name]) => !plain.has(name))
    .map(([name, value]) => `${name}: ${String(value)}`)
    .join('; ');
  const query = req.query.toString();
  return `Rejected request. ${headers} | ${req.method} ${req.path}${query ? `?${query}` : ''} | ${req.body}`;
}

/**
 * An upstream that refuses every request on every path (status 500), echoing
 * the request (headers, URL with its query, body) back in a plain-text error
 * body, as some real APIs do in their error pages.
 */
export async function startEchoUpstream(status = 500): Promise<FakeServer> {
  const echo: FakeHandler = (req) => ({ status, body: echoText(req) });
  const everyPath = new Proxy({} as Record<string, FakeHandler>, { get: () => echo });
  return startFakeServer(everyPath);
}

/** Every base URL of every provider, pointed at `url`. */
export function allProvidersAt(url: string): Record<string, string> {
  return {
    BRAVE_BASE_URL: `${url}/brave`,
    MOJEEK_BASE_URL: `${url}/mojeek`,
    MARGINALIA_BASE_URL: `${url}/marginalia`,
    STAAN_BASE_URL: `${url}/staan`,
    PIXABAY_BASE_URL: `${url}/pixabay`,
    SEPIA_BASE_URL: `${url}/sepia`,
    WORLDNEWS_BASE_URL: `${url}/worldnews`,
    WIKIPEDIA_BASE_URL: `${url}/wikipedia-{lang}`,
    WIKIDATA_BASE_URL: `${url}/wikidata`,
    THETVDB_BASE_URL: `${url}/thetvdb`,
    TRIPADVISOR_BASE_URL: `${url}/tripadvisor`,
    STACKEXCHANGE_BASE_URL: `${url}/stackexchange`,
    OPENMETEO_BASE_URL: `${url}/openmeteo`,
    OPENMETEO_GEOCODING_URL: `${url}/geocoding`,
    FRANKFURTER_BASE_URL: `${url}/frankfurter`,
    NOMINATIM_BASE_URL: `${url}/nominatim`,
    LIBRETRANSLATE_URL: `${url}/libretranslate`,
  };
}

/** Collects what the browser says about the Content-Security-Policy: console lines and violation events. */
export async function watchCsp(page: Page): Promise<{ violations(): Promise<string[]> }> {
  const console: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) console.push(msg.text());
  });
  // Injected by the browser's debugging protocol, so the page's CSP does not apply to it.
  await page.addInitScript(`
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__cspViolations.push(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' (' + e.sample + ')');
    });
  `);
  return {
    async violations() {
      const events = await page.evaluate<string[]>('window.__cspViolations || []').catch(() => [] as string[]);
      return [...console, ...events];
    },
  };
}

/** A computed style property of the first element matching `selector`. */
export function computedStyle(page: Page, selector: string, property: string): Promise<string> {
  return page.evaluate<string>(
    `getComputedStyle(document.querySelector(${JSON.stringify(selector)})).getPropertyValue(${JSON.stringify(property)})`,
  );
}
