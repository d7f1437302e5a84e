/*
 * `npm run api-reference`: writes docs/api.md, the API reference, from real
 * answers. It starts the demo stack the way `npm run demo` does (the fakes,
 * an embedded database of its own in a temporary directory, the demo user
 * and key: scripts/demo.ts), runs every curl the demo prints, then provokes
 * every error status and records each request and answer:
 *
 * - 400, 404, 405, 413, 415 on the demo instance; 401 without a key and with
 *   a bad one; 403 with the key of a user disabled for the purpose;
 * - 429 on a second instance with API_THROTTLE_BURST=1/min (and a third with
 *   API_MONTHLY_QUOTA=1), each with a key of its own;
 * - 503 on an instance without BRAVE_API_KEY and LIBRETRANSLATE_URL;
 * - 502 once the Mojeek fake is switched to answer 500 (last: the failures
 *   also make the provider "down" on the health endpoints).
 *
 * Keys become `svc_sk_…` and the address `http://localhost:8000` in the
 * output; timestamps, counters and the fakes' made-up data stay as answered.
 *
 *   npm run api-reference                       # writes docs/api.md
 *   npm run api-reference -- --out /tmp/api.md
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { issueApiKey, listApiKeys, revokeApiKey } from '../src/auth/api-keys.js';
import { createUser, setUserActive } from '../src/auth/users.js';
import { type Config, parseConfig } from '../src/config/index.js';
import { type Database, openDatabase } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { createLifecycle } from '../src/runtime/lifecycle.js';
import { shutdown } from '../src/runtime/shutdown.js';
import {
  checkEverythingLocal,
  curls,
  DEMO_SITE_PORT,
  demoCredentials,
  demoEnvironment,
  MONITOR_TOKEN,
  startFakes,
} from './demo.js';

const SHOWN_BASE = 'http://localhost:8000';
const SHOWN_KEY = 'svc_sk_…';
const SHOWN_TOKEN = 'your-monitor-token';
/** Response headers worth showing (others: Date, Content-Length, request ids…). */
const SHOWN_HEADERS = [
  'content-type',
  'cache-control',
  'www-authenticate',
  'allow',
  'retry-after',
  'ratelimit-policy',
  'ratelimit',
];
const KEY_PATTERN = /svc_sk_[0-9a-f]{8}(\.[A-Za-z0-9_-]+)?/g;

const log = pino({ level: 'error', base: { apiReference: true } }, pino.destination(2));

// --- requests from curl lines --------------------------------------------------------------

interface Request {
  url: string;
  init: RequestInit;
}

/** A curl line as a fetch call: -X, -H, --data-urlencode (a form POST), -d (a raw POST body), the URL. */
export function parseCurl(line: string): Request {
  const tokens = [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  const headers: Record<string, string> = {};
  const form = new URLSearchParams();
  let method = '';
  let body: string | undefined;
  let url = '';
  for (let i = 1; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '-H') {
      const header = tokens[++i]!;
      const colon = header.indexOf(':');
      headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (token === '-X') {
      method = tokens[++i]!;
    } else if (token === '--data-urlencode') {
      const pair = tokens[++i]!;
      const eq = pair.indexOf('=');
      form.append(pair.slice(0, eq), pair.slice(eq + 1));
    } else if (token === '-d' || token === '--data-binary') {
      body = tokens[++i]!;
    } else if (token.startsWith('-')) {
      throw new Error(`unexpected curl option ${token} in: ${line}`);
    } else {
      url = token;
    }
  }
  if (form.size > 0) return { url, init: { method: method || 'POST', headers, body: form } };
  if (body !== undefined) return { url, init: { method: method || 'POST', headers, body } };
  return { url, init: { method: method || 'GET', headers } };
}

// --- recording -----------------------------------------------------------------------------

interface Recorded {
  title: string;
  note?: string;
  /** The curl as shown. */
  curl: string;
  status: number;
  headers: [string, string][];
  /** Pretty JSON, or the text as answered. */
  body: string;
  trimmed: string[];
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;

/**
 * Keeps long answers readable, and says what was cut: lists of objects (results, places…)
 * and maps of objects (a code → details table) to their first two, lists of more than
 * twelve strings or numbers to ten, long strings to 200 characters.
 */
function trimJson(value: unknown, at: string, cuts: string[]): unknown {
  if (Array.isArray(value)) {
    const keep = value.some(isObject) ? (value.length > 3 ? 2 : value.length) : value.length > 12 ? 10 : value.length;
    if (keep < value.length) cuts.push(`\`${at}\`: ${keep} of ${value.length} items shown`);
    return value.slice(0, keep).map((v, i) => trimJson(v, `${at}[${i}]`, cuts));
  }
  if (isObject(value)) {
    let entries = Object.entries(value);
    if (entries.length > 4 && entries.every(([, v]) => isObject(v))) {
      cuts.push(`\`${at}\`: 2 of ${entries.length} entries shown`);
      entries = entries.slice(0, 2);
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, trimJson(v, at ? `${at}.${k}` : k, cuts)]));
  }
  if (typeof value === 'string' && value.length > 300) {
    cuts.push(`\`${at}\`: ${value.length} characters, cut`);
    return `${value.slice(0, 200)}…`;
  }
  return value;
}

/** The OpenAPI document is thousands of lines: its outline only. */
function outlineOpenApi(doc: Record<string, unknown>, cuts: string[]): unknown {
  const paths = doc.paths as Record<string, Record<string, { operationId?: string; summary?: string }>>;
  const components = doc.components as Record<string, Record<string, unknown>>;
  cuts.push('`paths`: each operation reduced to its `operationId` and `summary`', '`components`: names only');
  return {
    ...doc,
    paths: Object.fromEntries(
      Object.entries(paths).map(([p, item]) => [
        p,
        Object.fromEntries(
          Object.entries(item).map(([m, op]) => [m, { operationId: op.operationId, summary: op.summary }]),
        ),
      ]),
    ),
    components: Object.fromEntries(Object.entries(components).map(([k, v]) => [k, Object.keys(v)])),
  };
}

interface Instance {
  base: string;
  key: string;
}

interface ExampleSpec {
  title: string;
  note?: string;
  /** The curl with `BASE` and `KEY` for the instance's address and key. */
  curl: string;
  /** A body sent instead of the one in the curl (shown as `@file` there). */
  body?: string;
  outline?: 'openapi';
}

let secrets: string[] = [];
/** The demo site's address as this run started it, shown as the demo's usual one. */
let siteBase = '';
const SHOWN_SITE = `http://127.0.0.1:${DEMO_SITE_PORT}`;

/** The text as shown: addresses and keys replaced. */
function shown(text: string, instances: Instance[]): string {
  let out = text;
  for (const i of instances) out = out.split(i.base).join(SHOWN_BASE);
  if (siteBase && siteBase !== SHOWN_SITE) {
    out = out.split(siteBase).join(SHOWN_SITE).split(encodeURIComponent(siteBase)).join(encodeURIComponent(SHOWN_SITE));
  }
  for (const s of secrets) out = out.split(s).join(SHOWN_KEY);
  return out.replace(KEY_PATTERN, SHOWN_KEY).split(MONITOR_TOKEN).join(SHOWN_TOKEN);
}

async function record(spec: ExampleSpec, on: Instance, all: Instance[]): Promise<Recorded> {
  const line = spec.curl.split('BASE').join(on.base).split('KEY').join(on.key);
  const request = parseCurl(line);
  if (spec.body !== undefined) request.init.body = spec.body;
  const res = await fetch(request.url, request.init);
  const text = await res.text();
  const trimmed: string[] = [];
  let body = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) {
    const json = JSON.parse(text) as Record<string, unknown>;
    const shownJson = spec.outline === 'openapi' ? outlineOpenApi(json, trimmed) : trimJson(json, '', trimmed);
    body = JSON.stringify(shownJson, null, 2);
  }
  const headers = SHOWN_HEADERS.flatMap((h): [string, string][] => {
    const v = res.headers.get(h);
    return v === null ? [] : [[h, v]];
  });
  return {
    title: spec.title,
    ...(spec.note ? { note: spec.note } : {}),
    curl: shown(line, all),
    status: res.status,
    headers: headers.map(([h, v]) => [h, shown(v, all)]),
    body: shown(body, all),
    trimmed,
  };
}

function renderExample(r: Recorded, level = '###'): string[] {
  const out = [`${level} ${r.title}`, ''];
  if (r.note) out.push(r.note, '');
  out.push('```sh', r.curl, '```', '');
  if (r.trimmed.length) out.push(`Answer (trimmed: ${r.trimmed.join('; ')}):`, '');
  out.push(
    '```http',
    `HTTP/1.1 ${r.status} ${STATUS_CODES[r.status] ?? ''}`.trimEnd(),
    ...r.headers.map(([h, v]) => `${h}: ${v}`),
    '',
    r.body,
    '```',
    '',
  );
  return out;
}

// --- the stack -----------------------------------------------------------------------------

async function main(): Promise<void> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const { values: args } = parseArgs({
    options: { out: { type: 'string', default: path.join(root, 'docs', 'api.md') } },
  });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sift-api-reference-'));
  const { env: fakesEnv, close: closeFakes, fakes, site } = await startFakes();
  siteBase = site.url;
  const lifecycle = createLifecycle();
  const apps: FastifyInstance[] = [];
  let db: Database | undefined;
  let deadPool: ReturnType<typeof createPool> | undefined;
  try {
    const demoEnv = demoEnvironment(fakesEnv, { port: '0', host: '127.0.0.1', dataDir });
    const config = parseConfig(demoEnv);
    checkEverythingLocal(config);
    process.stderr.write(`api-reference: starting the demo stack (embedded PostgreSQL in ${dataDir})…\n`);
    db = await openDatabase(config, { info: () => {}, warn: (m) => log.warn(m), error: (o, m) => log.error(o, m) });
    await migrate(db.pool);
    const pool = db.pool;

    const listen = async (c: Config, on = pool): Promise<string> => {
      // The instance without a database logs its failures: silenced.
      const app = await buildApp(c, { pool: on, lifecycle, logger: on === pool ? log : false });
      apps.push(app);
      await app.listen({ port: 0, host: '127.0.0.1' });
      return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    };
    /** A user of its own with a fresh key. */
    const userKey = async (username: string): Promise<{ userId: number; key: string }> => {
      const user = await createUser(pool, { username, password: `${username}-${Date.now()}-password` });
      const { key } = await issueApiKey(pool, user.id, username);
      secrets.push(key);
      return { userId: user.id, key };
    };
    const variant = (extra: Record<string, string>, drop: string[] = []) => {
      const env: Record<string, string> = { ...demoEnv, PROBE_INTERVAL_SECONDS: '0', ...extra };
      for (const name of drop) delete env[name];
      return parseConfig(env);
    };

    const { key } = await demoCredentials(db);
    secrets = [key];
    const demo: Instance = { base: await listen(config), key };
    const bare: Instance = {
      base: await listen(variant({}, ['BRAVE_API_KEY', 'BRAVE_SUGGEST_API_KEY', 'LIBRETRANSLATE_URL'])),
      key,
    };
    const throttled: Instance = {
      base: await listen(variant({ API_THROTTLE_BURST: '1/min' })),
      key: (await userKey('throttled')).key,
    };
    const quota: Instance = {
      base: await listen(variant({ API_MONTHLY_QUOTA: '1' })),
      key: (await userKey('quota')).key,
    };
    const disabledUser = await userKey('disabled');
    await setUserActive(pool, disabledUser.userId, false);
    const disabled: Instance = { base: demo.base, key: disabledUser.key };
    // An instance whose database does not answer (nothing listens on port 1).
    deadPool = createPool('postgres://sift@127.0.0.1:1/sift', { max: 2 });
    const noDatabase: Instance = { base: await listen(variant({}), deadPool), key };
    const all = [demo, bare, throttled, quota, noDatabase];

    // 1. Every curl `npm run demo` prints, on the demo instance.
    const lines = curls('BASE', 'KEY', MONITOR_TOKEN, site.url);
    const endpoints: Recorded[] = [];
    const health: Recorded[] = [];
    const searxng: Recorded[] = [];
    const mcp: Recorded[] = [];
    for (let i = 0; i + 1 < lines.length; i += 2) {
      const title = lines[i]!.replace(/^#\s*/, '');
      const curl = lines[i + 1]!;
      const request = parseCurl(curl);
      const pathOnly = new URL(request.url.replace('BASE', 'http://sift')).pathname;
      const spec: ExampleSpec = {
        title: `${title[0]!.toUpperCase()}${title.slice(1)}: \`${request.init.method} ${pathOnly}\``,
        curl,
        ...(pathOnly === '/api/v1/schema/' ? { outline: 'openapi' as const } : {}),
      };
      const recorded = await record(spec, demo, all);
      // The demo's one deliberate refusal: a page its site's robots.txt disallows (its title says 502).
      const expected = title.includes('(502') ? 502 : 200;
      if (recorded.status !== expected) throw new Error(`${curl} answered ${recorded.status}:\n${recorded.body}`);
      const group = pathOnly.startsWith('/api/')
        ? endpoints
        : pathOnly === '/search'
          ? searxng
          : pathOnly === '/mcp'
            ? mcp
            : health;
      group.push(recorded);
    }

    // 1b. The other doors: SearXNG's JSON API and MCP, beyond the demo's two examples.
    const door = async (list: Recorded[], spec: ExampleSpec) => {
      const recorded = await record(spec, demo, all);
      if (recorded.status !== 200) throw new Error(`${spec.curl} answered ${recorded.status}:\n${recorded.body}`);
      list.push(recorded);
    };
    await door(searxng, {
      title: 'The key in the base URL, for clients that take only a URL: `GET /searxng/<key>/search`',
      note: 'Below `/searxng/<key>/` every path of this API answers as at the root (`SEARXNG_KEY_IN_URL_ENABLED`); HTTP Basic auth with the key as the password works too.',
      curl: 'curl "BASE/searxng/KEY/search?q=climate&format=json&categories=news"',
    });
    await door(searxng, {
      title: 'CSV, as SearXNG writes it: `GET /search?format=csv`',
      curl: 'curl -H "X-API-Key: KEY" "BASE/search?q=privacy+search&format=csv&engines=mojeek"',
    });
    await door(searxng, {
      title: 'Categories, engines and what each supports: `GET /config`',
      curl: 'curl -H "X-API-Key: KEY" "BASE/config"',
    });
    await door(searxng, {
      title: 'Suggestions in OpenSearch form: `GET /autocompleter`',
      curl: 'curl -H "X-API-Key: KEY" "BASE/autocompleter?q=priv"',
    });
    await door(searxng, {
      title: "SearXNG's health check, without a key: `GET /healthz`",
      curl: 'curl "BASE/healthz"',
    });
    await door(mcp, {
      title: 'The tools and their schemas: `POST /mcp` (tools/list)',
      curl: `curl ${'-H "Authorization: Api-Key KEY"'} -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "BASE/mcp"`,
    });

    // 2. Errors.
    const auth = '-H "Authorization: Api-Key KEY"';
    const errors = new Map<number, Recorded[]>();
    const add = async (status: number, on: Instance, spec: ExampleSpec) => {
      const recorded = await record(spec, on, all);
      if (recorded.status !== status) {
        throw new Error(`${spec.curl} answered ${recorded.status}, not ${status}:\n${recorded.body}`);
      }
      errors.set(status, [...(errors.get(status) ?? []), recorded]);
    };

    await add(400, demo, {
      title: 'Invalid parameters: one message per invalid field, all at once',
      curl: `curl ${auth} "BASE/api/v1/web/?page=two&engine=provider_99"`,
    });
    await add(400, demo, {
      title: 'Similar images without `q` or `query`',
      curl: `curl ${auth} "BASE/api/v1/images/similar/"`,
    });
    await add(400, demo, {
      title: 'A malformed JSON body',
      curl: `curl ${auth} -H "Content-Type: application/json" -d '{"q": "hello",' "BASE/api/v1/translate/"`,
    });
    await add(401, demo, {
      title: 'No key (or an unrecognised scheme)',
      curl: `curl "BASE/api/v1/web/?q=privacy"`,
    });
    const revoked = await userKey('revoked');
    const [revokedKey] = await listApiKeys(pool, { userId: revoked.userId });
    await revokeApiKey(pool, revokedKey!.id, revoked.userId);
    await add(
      401,
      { base: demo.base, key: revoked.key },
      {
        title: 'A bad or revoked key',
        note: 'A key revoked with `sift revoke-api-key`; a mistyped or made-up key gets the same answer.',
        curl: `curl ${auth} "BASE/api/v1/web/?q=privacy"`,
      },
    );
    await add(403, disabled, {
      title: 'A key of a disabled account',
      note: 'The owner was disabled with `sift disable-user`.',
      curl: `curl ${auth} "BASE/api/v1/web/?q=privacy"`,
    });
    await add(404, demo, {
      title: 'An unknown path under `/api/v1/`',
      curl: `curl ${auth} "BASE/api/v1/nothing-here/"`,
    });
    await add(405, demo, {
      title: 'A known path, another method (`Allow` lists the methods)',
      curl: `curl ${auth} -X DELETE "BASE/api/v1/web/?q=privacy"`,
    });
    await add(413, demo, {
      title: 'A body over 256 KiB',
      note: '`big.json` is 300 KiB of JSON.',
      curl: `curl ${auth} -H "Content-Type: application/json" --data-binary @big.json "BASE/api/v1/translate/"`,
      body: JSON.stringify({ q: 'x'.repeat(300 * 1024), target: 'de' }),
    });
    await add(415, demo, {
      title: 'A body neither form-encoded nor JSON',
      curl: `curl ${auth} -H "Content-Type: application/xml" -d "<q>hello</q>" "BASE/api/v1/translate/"`,
    });
    // The throttled instance: the first request is admitted, the second within the minute refused.
    await fetch(`${throttled.base}/api/v1/web/?q=first`, { headers: { Authorization: `Api-Key ${throttled.key}` } });
    await add(429, throttled, {
      title: 'A rate limit exhausted',
      note: 'On an instance with `API_THROTTLE_BURST=1/min`: the second request of the key within a minute. `Retry-After` says when to retry.',
      curl: `curl ${auth} "BASE/api/v1/web/?q=second"`,
    });
    await fetch(`${quota.base}/api/v1/web/?q=first`, { headers: { Authorization: `Api-Key ${quota.key}` } });
    await add(429, quota, {
      title: 'The monthly search quota exhausted',
      note: "On an instance with `API_MONTHLY_QUOTA=1`: the user's second search this month.",
      curl: `curl ${auth} "BASE/api/v1/web/?q=second"`,
    });
    await add(503, bare, {
      title: 'No provider of the request is configured',
      note: 'On an instance without `BRAVE_API_KEY`.',
      curl: `curl ${auth} "BASE/api/v1/web/?q=privacy&engine=provider_01"`,
    });
    await add(503, bare, {
      title: 'Translation without a backend',
      note: 'On an instance without `LIBRETRANSLATE_URL`.',
      curl: `curl ${auth} "BASE/api/v1/translate/?q=hello&target=de"`,
    });
    await add(503, noDatabase, {
      title: 'The keys or limits cannot be checked',
      note: 'On an instance whose database does not answer. `Retry-After` says when to retry.',
      curl: `curl ${auth} "BASE/api/v1/web/?q=privacy"`,
    });
    // 3. Tavily's API, as its SDKs call it (a Bearer key, a JSON body).
    const tavily: Recorded[] = [];
    const bearer = '-H "Authorization: Bearer KEY" -H "Content-Type: application/json"';
    const addTavily = async (status: number, on: Instance, spec: ExampleSpec) => {
      const recorded = await record(spec, on, all);
      if (recorded.status !== status) throw new Error(`${spec.curl} answered ${recorded.status}:\n${recorded.body}`);
      tavily.push(recorded);
    };
    await addTavily(200, demo, {
      title: 'Search: `POST /tavily/search`',
      curl: `curl ${bearer} -d '{"query": "privacy", "max_results": 2, "include_favicon": true, "include_usage": true}' "BASE/tavily/search"`,
    });
    await addTavily(200, demo, {
      title: 'News, with images: `POST /tavily/search`',
      curl: `curl ${bearer} -d '{"query": "privacy", "topic": "news", "max_results": 2, "include_images": true}' "BASE/tavily/search"`,
    });
    await addTavily(200, demo, {
      title: 'Extract: `POST /tavily/extract`',
      note: 'A private address is never fetched: it is an entry of `failed_results`, as every page that could not be read (the demo serves no pages to read here).',
      curl: `curl ${bearer} -d '{"urls": ["http://127.0.0.1/"], "query": "privacy", "chunks_per_source": 2}' "BASE/tavily/extract"`,
    });
    await addTavily(400, demo, {
      title: "A value of the wrong type (tavily-python's BadRequestError)",
      curl: `curl ${bearer} -d '{"query": "privacy", "max_results": "five"}' "BASE/tavily/search"`,
    });
    await addTavily(
      401,
      { base: demo.base, key: revoked.key },
      {
        title: "A bad or revoked key (tavily-python's InvalidAPIKeyError)",
        curl: `curl ${bearer} -d '{"query": "privacy"}' "BASE/tavily/search"`,
      },
    );

    // Last: a failing upstream (the provider stays suspended and down afterwards).
    fakes.web.mojeek.setMode({ kind: 'status', status: 500, body: { error: 'internal error' } });
    await add(502, demo, {
      title: 'Every provider asked failed',
      note: 'Mojeek (`provider_02`), the only engine asked, answering 500. A search never answers an outage with an empty 200.',
      curl: `curl ${auth} "BASE/api/v1/web/?q=outage&engine=provider_02"`,
    });

    const healthErrors: Recorded[] = [];
    const addHealth = async (status: number, on: Instance, spec: ExampleSpec) => {
      const recorded = await record(spec, on, all);
      if (recorded.status !== status) throw new Error(`${spec.curl} answered ${recorded.status}, not ${status}`);
      healthErrors.push(recorded);
    };
    const token = `-H "X-Monitor-Token: ${MONITOR_TOKEN}"`;
    await addHealth(403, demo, { title: 'A wrong or missing token', curl: `curl "BASE/status/health?token=wrong"` });
    await addHealth(404, demo, {
      title: 'An unknown provider',
      curl: `curl ${token} "BASE/status/health/provider_99"`,
    });
    await addHealth(404, bare, {
      title: 'A provider not configured on this instance',
      note: 'On an instance without `BRAVE_API_KEY`.',
      curl: `curl ${token} "BASE/status/health/provider_01"`,
    });
    await addHealth(405, demo, {
      title: 'A method other than GET or HEAD',
      curl: `curl ${token} -X POST "BASE/status/health"`,
    });
    // Mojeek keeps failing until it counts as down (its failures written to the status first).
    await apps[0]!.health.recorder.flush();
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${demo.base}/status/health/provider_02`, {
        headers: { 'X-Monitor-Token': MONITOR_TOKEN },
      });
      await res.arrayBuffer();
      if (res.status === 500) break;
      await fetch(`${demo.base}/api/v1/web/?q=outage-${i}&engine=provider_02`, { headers: { 'X-Api-Key': key } });
    }
    await addHealth(500, demo, {
      title: 'A provider down',
      note: 'Mojeek (`provider_02`) after its failures above.',
      curl: `curl ${token} "BASE/status/health/provider_02"`,
    });
    await addHealth(500, demo, {
      title: 'The roll-up with a provider down',
      curl: `curl "BASE/status/health?token=${MONITOR_TOKEN}"`,
    });

    const markdown = render(endpoints, { searxng, mcp }, health, errors, healthErrors, tavily);
    mkdirSync(path.dirname(args.out), { recursive: true });
    writeFileSync(args.out, markdown);
    process.stderr.write(`api-reference: wrote ${path.relative(process.cwd(), args.out)}\n`);
  } finally {
    for (const app of apps.slice(1).reverse()) await app.close();
    await shutdown({
      app: apps[0],
      lifecycle,
      closeDatabase: () => db?.close() ?? Promise.resolve(),
      drainTimeoutMs: 5000,
      log,
    });
    await deadPool?.end();
    await closeFakes();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** What Tavily's API does with each field (src/routes/tavily/): the section's prose. */
const TAVILY_INTRO = [
  "## Tavily's API (Tavily SDKs)",
  '',
  "`POST /tavily/search` and `POST /tavily/extract` answer as Tavily's API does, for its SDKs and the tools",
  'built on them: tavily-python (`TavilyClient(api_key="svc_sk_…", api_base_url="https://sift.example/tavily")`),',
  'langchain-tavily, @tavily/core (`tavily({ apiKey, apiBaseURL })`). The key is a Sift key, sent as',
  '`Authorization: Bearer <key>`; the gate, limits and quota are those of `/api/v1/`. Unknown fields are',
  'ignored and `null` is an absent field. Every error, refusals included, is `{"detail": {"error": "…"}}`:',
  'tavily-python raises InvalidAPIKeyError on a 401, ForbiddenError on a 403, UsageLimitExceededError on a',
  '429 (rate limits and quota) and BadRequestError on a 400; @tavily/core throws an Error with the message.',
  '',
  '**Search.** `query` (required); `max_results` 0 to 20 (default 5); `topic`: `general` (and `finance`) is',
  'the web search of every engine, `news` the news search; `time_range` (`day`, `week`, `month`, `year` or',
  '`d`, `w`, `m`, `y`), `days` (news: the smallest window covering them), `start_date` and `end_date`',
  '(`YYYY-MM-DD`: the smallest window reaching back to the start, then results dated outside the range left',
  'out); `include_domains` and `exclude_domains` (a domain matches itself and its subdomains; the results',
  'are filtered, the engines are not asked for more); `include_raw_content` (`true` or `"markdown"`,',
  '`"text"`: each result\'s page read by page contents, `raw_content` null for a page not read);',
  '`include_images` (the image search: as many `images` as `max_results`, five at least, as URLs, or with',
  "`include_image_descriptions` as `{url, description}`); `include_favicon` (the engine's favicon, else the site's `/favicon.ico`);",
  '`include_usage` (`usage.credits`: the searches counted). Accepted without effect: `search_depth`,',
  '`chunks_per_source`, `auto_parameters`, `country`, `exact_match`, and `include_answer`: Sift writes no',
  'answer, `answer` is null. `score` comes from the merge rank (1 − rank / (n + 1), the rank from 0 among',
  'the n merged results); `published_date` when an engine dated the result.',
  '',
  '**Extract.** `urls` (one URL or 1 to 20), `format` (`markdown` or `text`), `timeout` (1 to 60 seconds, within',
  "`CONTENTS_TIMEOUT_SECONDS`), `include_favicon` (the final origin's `/favicon.ico`), `include_images` (the",
  'images of the main content, markdown only), `query` with `chunks_per_source` (1 to 5, default 3): each page',
  "cut to its most relevant passages of at most 500 characters, ranked by BM25 over the page's paragraphs and",
  'joined with ` [...] `. `extract_depth` is accepted without effect. A page not read is in `failed_results`',
  'with the reason and detail of the contents endpoints.',
  '',
  '**Price**, as the REST calls doing the same work: a search counts one per web engine (news: one), one for',
  'the images, one per page asked with `include_raw_content`; an extract one per URL. A page not read and an',
  'image search that failed give theirs back; an error counts nothing.',
  '',
];

function render(
  endpoints: Recorded[],
  doors: { searxng: Recorded[]; mcp: Recorded[] },
  health: Recorded[],
  errors: Map<number, Recorded[]>,
  healthErrors: Recorded[],
  tavily: Recorded[],
): string {
  const out = [
    '# API reference',
    '',
    '<!-- Generated by `npm run api-reference` (scripts/api-reference.ts): rerun it rather than editing by hand. -->',
    '',
    'One request and its real answer per endpoint, then every error status with its body. The answers',
    'were recorded from `npm run demo`: every provider is a local fake, so the results are made-up demo',
    'data and provider names end in "(demo)". Keys are shown as `svc_sk_…` and the address as',
    `\`${SHOWN_BASE}\`; long answers are trimmed (each says so and what was cut). The full contract of`,
    'every endpoint, parameters and response schemas included, is the OpenAPI document at',
    '`GET /api/v1/schema/`.',
    '',
    'Every `/api/v1/` request needs a key: `Authorization: Api-Key <key>`, `Authorization: Bearer <key>`',
    'or `X-Api-Key: <key>`. Checks run in this order: the key (401, 403), rate limits and the monthly',
    'quota (429), the parameters (400), then the endpoint. Every path also answers without its trailing',
    'slash, and HEAD like GET. Answers carry `RateLimit-Policy` and `RateLimit` headers.',
    '',
    '## Endpoints',
    '',
  ];
  for (const r of endpoints) out.push(...renderExample(r));
  out.push(
    "## SearXNG's JSON API: `/search`, `/config`, `/autocompleter`",
    '',
    'For the tools made for SearXNG (Open WebUI, LibreChat, Perplexica, LangChain, n8n, mcp-searxng):',
    '`GET` or `POST /search` with `q`, `format` (`json`, `csv`, `rss`), `categories` (general, images,',
    'news, videos, map), `engines`, `language`, `pageno`, `time_range`, `safesearch`; bangs in the query',
    '(`!images`, `!news`, `!brave`, `!mojeek`) choose what is searched. The key goes in the usual headers,',
    'as the password (or user name) of HTTP Basic auth, or in the base URL (`/searxng/<key>/`). A',
    'search counts what the same searches count over REST: one per web engine of the general category,',
    'one per other category. Errors are JSON with `error` and `detail` (401, 403, 429 and 503 included).',
    '',
  );
  for (const r of doors.searxng) out.push(...renderExample(r));
  out.push(
    '## MCP: `/mcp`',
    '',
    'Streamable HTTP, stateless (`POST` only): the same keys, limits and usage as the REST API. Each tool',
    'is one REST endpoint; a call counts what that endpoint counts, and its answer carries the REST body',
    'as `structuredContent` and a short text for the model.',
    '',
  );
  for (const r of doors.mcp) out.push(...renderExample(r));
  out.push(
    '## Liveness and health',
    '',
    '`/up` needs nothing. The health endpoints need the monitor token when `STATUS_MONITOR_TOKEN` is set',
    '(`?token=`, `X-Monitor-Token` or `Authorization: Bearer`); they answer 500 when a watched provider is down.',
    '',
  );
  for (const r of health) out.push(...renderExample(r));
  out.push(
    '## Errors',
    '',
    'Error bodies are JSON: `{"detail": "…"}`, except 400 (one message per invalid field, `detail` for a',
    'body that cannot be read) and 502 (`detail` and the providers that failed in `unresponsive`).',
    'Every 401 carries `WWW-Authenticate: Api-Key` (the SearXNG-compatible API offers `Basic` first, which it accepts); every 429 `Retry-After`.',
    'Every answer carries `Cache-Control: no-store`: no shared cache keeps one.',
    '',
    '| Status | When |',
    '|---|---|',
    '| 400 | a bad parameter: one message per invalid field |',
    '| 401 | no key, an unrecognised scheme, or a bad or revoked key |',
    '| 403 | the key belongs to a disabled account |',
    '| 404 | no such path |',
    '| 405 | the path exists, not with this method (`Allow` lists the methods) |',
    '| 413 | a POST body over 256 KiB |',
    '| 415 | a POST body neither form-encoded nor JSON |',
    '| 429 | a rate limit (burst or sustained) or the monthly quota exhausted |',
    '| 502 | every provider asked failed |',
    "| 503 | nothing in the request's scope is configured, translation has no backend, or the keys and limits cannot be checked (database unreachable; with `Retry-After`) |",
    '',
  );
  for (const [status, examples] of [...errors].sort(([a], [b]) => a - b)) {
    out.push(`### ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd(), '');
    for (const r of examples) out.push(...renderExample(r, '####'));
  }
  out.push(
    '### Health endpoint errors',
    '',
    'Every answer of the health endpoints is JSON with `Cache-Control: no-store`.',
    '',
  );
  for (const r of healthErrors) out.push(...renderExample(r, '####'));
  out.push(...TAVILY_INTRO);
  for (const r of tavily) out.push(...renderExample(r));
  return `${out.join('\n').trimEnd()}\n`;
}

main().catch((err: unknown) => {
  process.stderr.write(`api-reference failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
