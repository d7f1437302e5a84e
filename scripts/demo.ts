/*
 * `npm run demo`: Sift with every provider configured against local fake
 * upstreams (the fakes the tests use, test/fakes/), on an embedded database
 * of its own (./data/demo), with a demo user and API key. Prints the key, the
 * sign-in for /status and a ready curl for every endpoint. Nothing leaves the
 * machine: every base URL points at 127.0.0.1. DEMO_MODE labels it: a "Demo
 * data" banner on the pages, "(demo)" after every provider name.
 *
 *   npm run demo                                   # http://127.0.0.1:8000
 *   npm run demo -- --port 8100 --host 0.0.0.0 --data-dir data/demo2
 *   npm run demo -- --fail provider_04             # Staan's fake starts out failing
 *   METRICS_ENABLED=true ALERT_WEBHOOK_URLS=… npm run demo
 *
 * The environment (and .env) is read as `npm start` reads it, with the demo's
 * defaults where it sets nothing; the options beat both. Only what makes it a
 * demo is fixed: the fakes' URLs and keys, its own database, DEMO_MODE. A
 * fault control on 127.0.0.1 (test/fakes/control.ts, docs/demo.md) fails and
 * restores providers while it runs.
 *
 * Ctrl-C (or SIGTERM) stops the server, the embedded database and the fakes.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { alertTargetOf } from '../src/alerts/formats.js';
import { buildApp } from '../src/app.js';
import { issueApiKey, listApiKeys, revokeApiKey } from '../src/auth/api-keys.js';
import { createUser, findUserByName, setPassword } from '../src/auth/users.js';
import { type Config, ConfigError, ENV_VARIABLES, loadConfigWith } from '../src/config/index.js';
import { type Database, openDatabase } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { createLifecycle } from '../src/runtime/lifecycle.js';
import { PROVIDERS, createProviderDirectory } from '../src/providers/registry.js';
import { shutdown } from '../src/runtime/shutdown.js';
import { type SiteFake, startSiteFake } from '../test/fakes/site.js';
import { startAllFakes } from '../test/fakes/all.js';
import { FAILURES, type FaultControl, isFailure, startFaultControl } from '../test/fakes/control.js';

/*
 * The pieces are exported for scripts/api-reference.ts, which starts the same
 * stack to record docs/api.md; main() runs only when this file is the script.
 */

export const DEMO_USER = 'demo';
export const MONITOR_TOKEN = 'demo-monitor-token';

/** Every fake upstream, started on 127.0.0.1 (test/fakes/all.ts), and the environment that points Sift at them. */
/** Where the demo's web site listens (page contents read it through CONTENTS_ALLOW_HOSTS); any free port if taken. */
export const DEMO_SITE_PORT = 8089;

/** The demo's local web site: an article, a blog post, a PDF and a path robots.txt disallows. */
async function startDemoSite(): Promise<SiteFake> {
  try {
    return await startSiteFake({ port: DEMO_SITE_PORT });
  } catch {
    return await startSiteFake();
  }
}

export async function startFakes() {
  const [all, site] = await Promise.all([startAllFakes(), startDemoSite()]);
  const fakes = {
    web: all.web,
    pixabay: all.pixabay,
    sepia: all.sepia,
    worldnews: all.worldnews,
    cards: all.cards,
    meteo: all.openmeteo,
    fx: all.frankfurter,
    libre: all.libretranslate,
  };
  const env = { ...all.env, CONTENTS_ALLOW_HOSTS: `127.0.0.1:${site.port}` };
  return { env, close: () => Promise.all([all.close(), site.close()]).then(() => {}), fakes, all, site };
}

/** What every demo sets whatever the environment says: every provider at its fake, its own embedded database, labelled as a demo. */
export function demoFixedEnvironment(fakesEnv: Record<string, string>): Record<string, string> {
  return {
    ...fakesEnv,
    // Never a DATABASE_URL from anywhere (a .env may hold production's): the demo has its own embedded database.
    DATABASE_URL: '',
    DATABASE_PASSWORD: '',
    DEMO_MODE: 'true',
  };
}

/** The demo's settings where the environment sets nothing. */
export const DEMO_DEFAULTS: Readonly<Record<string, string>> = {
  PORT: '8000',
  HOST: '127.0.0.1',
  DATA_DIR: 'data/demo',
  LOG_LEVEL: 'warn',
  STATUS_MONITOR_TOKEN: MONITOR_TOKEN,
};

/** The demo's environment without the user's (scripts/api-reference.ts records the docs from it). */
export function demoEnvironment(
  fakesEnv: Record<string, string>,
  where: { port: string; host: string; dataDir: string },
): Record<string, string> {
  return {
    ...DEMO_DEFAULTS,
    ...demoFixedEnvironment(fakesEnv),
    PORT: where.port,
    HOST: where.host,
    DATA_DIR: path.resolve(where.dataDir),
  };
}

/** Refuses to start unless every provider (but those DISABLED_PROVIDERS names) is configured and every upstream is local (the demo is offline). */
export function checkEverythingLocal(config: Config): void {
  const directory = createProviderDirectory(config);
  const problems: string[] = [];
  for (const p of PROVIDERS) {
    if (config.DISABLED_PROVIDERS.includes(p.slug)) continue;
    if (!directory.isConfigured(p.slug)) problems.push(`${p.slug} (${p.name}) is not configured`);
  }
  for (const variable of ENV_VARIABLES) {
    if (!variable.endsWith('_URL') || variable === 'DATABASE_URL') continue;
    const value = String(config[variable]);
    if (!value.startsWith('http://127.0.0.1:')) problems.push(`${variable} is not a local fake: ${value}`);
  }
  if (problems.length) throw new Error(`demo set-up is incomplete:\n  ${problems.join('\n  ')}`);
}

/** The demo user (created once, a fresh password every run) and a fresh key (older demo keys revoked). */
export async function demoCredentials(db: Database): Promise<{ password: string; key: string }> {
  const password = `demo-${randomBytes(6).toString('hex')}`;
  const existing = await findUserByName(db.pool, DEMO_USER);
  const userId = existing ? existing.id : (await createUser(db.pool, { username: DEMO_USER, password })).id;
  if (existing) await setPassword(db.pool, userId, password);
  for (const k of await listApiKeys(db.pool, { userId })) {
    if (!k.revokedAt) await revokeApiKey(db.pool, k.id, userId);
  }
  const { key } = await issueApiKey(db.pool, userId, 'demo');
  return { password, key };
}

/** One line per endpoint: a comment and a curl command (double quotes only, nothing for the shell to expand). */
export function curls(base: string, key: string, monitorToken = MONITOR_TOKEN, site?: string): string[] {
  const auth = `-H "Authorization: Api-Key ${key}"`;
  const api = (comment: string, pathAndQuery: string) => [
    `# ${comment}`,
    `curl ${auth} "${base}/api/v1/${pathAndQuery}"`,
  ];
  return [
    ...api('the API index', ''),
    ...api('web search, merged from the four engines', 'web/?q=privacy+search'),
    ...api('web search, one engine, page 2', 'web/?q=privacy+search&engine=provider_02&page=2'),
    ...api('images', 'images/?q=mountain+lake'),
    ...api('images like an opened one', 'images/similar/?q=mountain+lake+at+dawn&query=mountain+lake'),
    ...api('news', 'news/?q=climate'),
    ...api('videos', 'videos/?q=bread+baking'),
    ...api('suggestions', 'suggest/?q=priv'),
    ...api('maps: geocoding', 'maps/?q=berlin'),
    ...api('maps: reverse lookup', 'maps/?lat=52.5163&lon=13.3777'),
    ...api('translation (GET)', 'translate/?q=hello+world&target=de'),
    '# translation (POST, form fields)',
    `curl ${auth} --data-urlencode "q=hello world" --data-urlencode "target=fr" "${base}/api/v1/translate/"`,
    ...api('translation languages', 'translate/languages/'),
    ...api('instant answer: currency', 'instant/?q=100+usd+to+eur'),
    ...api('instant answer: weather', 'instant/?q=weather+berlin'),
    ...api('instant answer: maths', 'instant/?q=2%2B2*3'),
    ...api('knowledge cards: an article', 'cards/?q=jupiter'),
    ...api('knowledge cards: a series', 'cards/?q=breaking+bad'),
    ...(site ? contentsCurls(auth, base, site) : []),
    ...api('provider status (names end in "(demo)")', 'status/'),
    ...api('this key and its usage', 'key/'),
    ...api('the OpenAPI 3.1 document of the API', 'schema/'),
    '# liveness, for load balancers',
    `curl "${base}/up"`,
    '# health roll-up for uptime monitors (token: ?token=, X-Monitor-Token or Authorization: Bearer)',
    `curl "${base}/status/health?token=${encodeURIComponent(monitorToken)}"`,
    "# one provider's health",
    `curl -H "X-Monitor-Token: ${monitorToken}" "${base}/status/health/provider_01"`,
  ];
}

/** Page contents of the demo's local site (`site`): one curl per kind of page, and one POST. */
function contentsCurls(auth: string, base: string, site: string): string[] {
  const page = (comment: string, path: string, more = '') => [
    `# ${comment}`,
    `curl ${auth} "${base}/api/v1/contents/?url=${encodeURIComponent(`${site}${path}`)}${more}"`,
  ];
  return [
    ...page('page contents: a news article with its boilerplate left out, as markdown', '/article.html'),
    ...page('page contents: a blog post in ISO-8859-1, as plain text', '/blog/zwetschgendatschi.html', '&format=text'),
    ...page('page contents: a PDF', '/doc.pdf'),
    ...page("page contents: a path the site's robots.txt disallows (502, robots_disallowed)", '/private/page.html'),
    '# page contents: several pages at once',
    `curl ${auth} -H "Content-Type: application/json" -d '{"urls": ["${site}/article.html", "${site}/notes.txt"], "max_chars": 2000}' "${base}/api/v1/contents/"`,
  ];
}

/** The fault control's commands, for one provider as the example. */
function controlCurls(control: FaultControl): string[] {
  const failing = Object.entries(control.states()).find(([, state]) => state !== 'ok')?.[0];
  const slug = failing ?? 'provider_04';
  return [
    '# how every provider answers now',
    `curl "${control.url}/providers"`,
    `# make ${slug} fail (mode: ${Object.keys(FAILURES).join(', ')})`,
    `curl -X POST "${control.url}/providers/${slug}/fail?mode=error"`,
    `# and recover`,
    `curl -X POST "${control.url}/providers/${slug}/restore"`,
  ];
}

/** `--fail provider_04`, `--fail provider_04:timeout,provider_13`: each slug with its failure. */
function parseFailOption(values: readonly string[]): { slug: string; failure: keyof typeof FAILURES }[] {
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean)
    .map((item) => {
      const [slug, failure = 'error'] = item.split(':');
      if (!isFailure(failure)) {
        throw new Error(`--fail ${item}: the failure must be one of ${Object.keys(FAILURES).join(', ')}`);
      }
      return { slug: slug!, failure };
    });
}

/** The demo's options; each given one beats the environment. */
function readOptions() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      fail: { type: 'string', multiple: true, default: [] },
      'control-port': { type: 'string', default: '8001' },
    },
  });
  const fixed: Record<string, string> = {};
  if (values.port !== undefined) fixed.PORT = values.port;
  if (values.host !== undefined) fixed.HOST = values.host;
  if (values['data-dir'] !== undefined) fixed.DATA_DIR = values['data-dir'];
  const controlPort = Number(values['control-port']);
  if (!Number.isInteger(controlPort) || controlPort < 0 || controlPort > 65535) {
    throw new Error(`--control-port must be a port number (got "${values['control-port']}")`);
  }
  return { fixed, fail: parseFailOption(values.fail), controlPort };
}

/** The lines that say what the environment switched on (webhook hosts only: their URLs often hold a secret). */
function extrasOf(config: Config, base: string): { info: string[]; tries: string[] } {
  const info: string[] = [];
  const tries: string[] = [];
  if (config.METRICS_ENABLED) {
    info.push(
      `  Metrics    ${base}/metrics${config.METRICS_TOKEN ? ' (with your METRICS_TOKEN as a Bearer token)' : ''}`,
    );
    if (!config.METRICS_TOKEN)
      tries.push(
        '# Prometheus metrics (sift_provider_state{state="down"} is 1 while a provider is down)',
        `curl "${base}/metrics"`,
      );
  }
  if (config.ALERT_WEBHOOK_URLS.length > 0) {
    const hosts = config.ALERT_WEBHOOK_URLS.map((u) => `${new URL(u).host} (${alertTargetOf(u).format})`);
    info.push(
      `  Alerts     ${hosts.join(', ')} (a message ${config.ALERT_DIGEST_WINDOW_MS / 1000} s after a provider goes down or up)`,
    );
  }
  if (config.API_MONTHLY_QUOTA > 0) info.push(`  Quota      ${config.API_MONTHLY_QUOTA} searches a month per key`);
  return { info, tries };
}

async function main(): Promise<void> {
  const options = readOptions();
  const fakes = await startFakes();
  let config: Config;
  let control: FaultControl;
  try {
    config = loadConfigWith({
      // Probes every 30 s: an outage of a probed provider (maps, translate, weather, currency) shows without a search.
      defaults: { ...DEMO_DEFAULTS, PROBE_INTERVAL_SECONDS: '30' },
      fixed: { ...demoFixedEnvironment(fakes.env), ...options.fixed },
    });
    checkEverythingLocal(config);
    control = await startFaultControl(fakes.all, options.controlPort);
    for (const { slug, failure } of options.fail) {
      if (!(slug in control.states())) {
        await control.close();
        throw new Error(`--fail ${slug}: no such provider (one of ${Object.keys(control.states()).join(', ')})`);
      }
      control.fail(slug, failure);
    }
  } catch (err) {
    await fakes.close();
    throw err instanceof ConfigError ? new Error(err.problems.join('\n')) : err;
  }
  const log = pino({ level: config.LOG_LEVEL, base: { demo: true } }, pino.destination(2));

  const lifecycle = createLifecycle();
  let db: Database | undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    if (stopping) return stopping;
    process.stderr.write(`\n${signal}: stopping the demo…\n`);
    stopping = (async () => {
      await shutdown({
        app,
        lifecycle,
        closeDatabase: () => db?.close() ?? Promise.resolve(),
        drainTimeoutMs: 5000,
        log,
      });
      await control.close();
      await fakes.close();
    })();
    return stopping;
  };
  // A terminal's Ctrl-C reaches npm and this process at once: the first signal stops, the others wait for it.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      stop(signal).then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, 'demo: stopping failed');
          process.exit(1);
        },
      );
    });
  }

  try {
    process.stderr.write(`Starting the Sift demo (embedded PostgreSQL in ${config.DATA_DIR})…\n`);
    db = await openDatabase(config, {
      info: () => {},
      warn: (m) => log.warn(m),
      error: (o, m) => log.error(o, m),
    });
    await migrate(db.pool);
    const credentials = await demoCredentials(db);
    app = await buildApp(config, { pool: db.pool, lifecycle, logger: log });
    await app.listen({ port: config.PORT, host: config.HOST });
    const { port } = app.server.address() as AddressInfo;
    const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
    const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const extras = extrasOf(config, base);
    const lines = [
      '',
      'Sift demo: every provider answers from a local fake upstream; nothing leaves this machine.',
      'Responses are made-up demo data (provider names end in "(demo)", the pages carry a banner).',
      '',
      `  Base URL   ${base}`,
      `  API key    ${credentials.key}`,
      `  Sign in    ${base}/login as ${DEMO_USER} / ${credentials.password}  (then ${base}/status and ${base}/settings/keys)`,
      `  Monitor    token ${config.STATUS_MONITOR_TOKEN || '(none: the health endpoints are open)'}`,
      `  Data       ${config.DATA_DIR} (embedded PostgreSQL; delete it to start afresh)`,
      `  Control    ${control.url} (demo only: fail and restore providers)`,
      ...extras.info,
      '',
      'Try:',
      '',
      ...[...curls(base, credentials.key, config.STATUS_MONITOR_TOKEN, fakes.site.url), ...extras.tries].map(
        (l) => `  ${l}`,
      ),
      '',
      'Make a provider fail, then recover (the status page, /metrics and the webhooks react; docs/demo.md):',
      '',
      ...controlCurls(control).map((l) => `  ${l}`),
      '',
      'Ctrl-C stops the demo.',
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } catch (err) {
    await stop('error').catch(() => {});
    throw err;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
