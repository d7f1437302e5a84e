import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import openapiTS from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser, setUserActive } from '../../src/auth/users.js';
import { monthStart } from '../../src/limits/month.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { type CardFakes, startCardFakes } from '../fakes/cards.js';
import type { FakeServer } from '../fakes/fake-server.js';
import { startFrankfurterFake } from '../fakes/frankfurter.js';
import { type MediaFakes, startMediaFakes, startWebFakes, type WebFakes } from '../fakes/index.js';
import { type LibreTranslateFake, startLibreTranslateFake } from '../fakes/libretranslate.js';
import { startOpenMeteoFake } from '../fakes/openmeteo.js';
import { type SiteFake, startSiteFake } from '../fakes/site.js';
import { loadFixtures } from '../cards/fixtures.js';
import { buildTestApp, type TestApp, UNTHROTTLED } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * GET /api/v1/schema/: the OpenAPI 3.1 document, checked against the app it
 * describes. Every route under /api/v1 (read from the app's router) is in it
 * with its methods; it is a valid OpenAPI 3.1 document whose schemas compile
 * as JSON Schema 2020-12; real answers of every endpoint (200s from the
 * upstream fakes, and the errors: 400, 401, 403, 404, 405, 415, 429, 502,
 * 503) validate against the response it documents for their status; and a
 * typed client generated from it with openapi-typescript compiles.
 */

const TIMEOUT_MS = 800;
const execFileAsync = promisify(execFile);

type Json = Record<string, unknown>;
interface Doc {
  openapi: string;
  paths: Record<string, Json>;
  components: { schemas: Record<string, Json>; responses: Record<string, Json> };
}

let db: TestDatabase;
let web: WebFakes;
let media: MediaFakes;
let cards: CardFakes;
let translateFake: LibreTranslateFake;
let meteo: FakeServer;
let fx: FakeServer;
let site: SiteFake;
let t: TestApp;
let bare: TestApp;
let apiKey: string;
let bareKey: string;
let disabledKey: string;
let doc: Doc;
let ajv: InstanceType<typeof Ajv2020>;

const auth = (key: string) => ({ authorization: `Api-Key ${key}` });

beforeAll(async () => {
  db = await createTestDatabase();
  [web, media, cards, translateFake, meteo, fx] = await Promise.all([
    startWebFakes(),
    startMediaFakes(),
    startCardFakes(),
    startLibreTranslateFake(),
    startOpenMeteoFake(),
    startFrankfurterFake(),
  ]);
  loadFixtures(cards);
  site = await startSiteFake();
  t = await buildTestApp(db, {
    CONTENTS_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    CONTENTS_TIMEOUT_SECONDS: '30',
    ...media.env,
    // One Brave for everything: the web fakes' (web, images, news, videos and suggest).
    ...web.env,
    ...cards.env,
    LIBRETRANSLATE_URL: translateFake.url,
    OPENMETEO_BASE_URL: meteo.url,
    OPENMETEO_GEOCODING_URL: meteo.url,
    FRANKFURTER_BASE_URL: fx.url,
    ...UNTHROTTLED,
    PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  // No provider configured (keyless ones disabled), status page off.
  bare = await buildTestApp(db, {
    ...UNTHROTTLED,
    STATUS_PAGE_ENABLED: 'false',
    DISABLED_PROVIDERS: 'provider_06,provider_13',
  });
  const user = await createUser(db.pool, { username: 'openapi' });
  apiKey = (await issueApiKey(db.pool, user.id)).key;
  bareKey = (await issueApiKey(db.pool, user.id)).key;
  const disabled = await createUser(db.pool, { username: 'openapi-disabled' });
  disabledKey = (await issueApiKey(db.pool, disabled.id)).key;
  await setUserActive(db.pool, disabled.id, false);

  const res = await t.app.inject({ url: '/api/v1/schema/', headers: auth(apiKey) });
  expect(res.statusCode).toBe(200);
  doc = res.json() as Doc;
  // The whole document as one schema resource (its top-level members as inert keywords), so the
  // schemas inside it resolve their $refs (#/components/schemas/…) as in the document.
  ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addVocabulary(Object.keys(doc));
  ajv.addSchema(doc, 'openapi.json');
});

afterAll(async () => {
  await t?.close();
  await bare?.close();
  await Promise.all([
    web?.close(),
    media?.close(),
    cards?.close(),
    translateFake?.close(),
    meteo?.close(),
    fx?.close(),
    site?.close(),
  ]);
  await db?.drop();
});

// --- helpers ---------------------------------------------------------------------------------------

/** JSON pointer escaping of one reference token. */
const token = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

function deref<T = Json>(value: Json): T {
  const $ref = value.$ref;
  if (typeof $ref !== 'string') return value as T;
  let target: unknown = doc;
  for (const part of $ref.replace(/^#\//, '').split('/')) {
    target = (target as Json)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  expect(target, $ref).toBeDefined();
  return deref(target as Json);
}

/**
 * The documented path item of a request path, and the pointer to it. A path with its trailing
 * slash is the slash-less one's (the document says so once, and lists each path once).
 */
function pathItem(path: string): { item: Json; pointer: string } | undefined {
  if (!doc.paths[path] && path.endsWith('/') && doc.paths[path.slice(0, -1)]) path = path.slice(0, -1);
  const raw = doc.paths[path];
  if (!raw) return undefined;
  const $ref = raw.$ref;
  if (typeof $ref === 'string') return { item: deref(raw), pointer: $ref };
  return { item: raw, pointer: `#/paths/${token(path)}` };
}

/** Routes of the app's router: [path, method] for every route under /api/v1. */
function apiRoutes(app: TestApp): [path: string, method: string][] {
  const tree = app.app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const routes: [string, string][] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([^)]*)\))?$/u.exec(line);
    if (!m) continue;
    const depth = [...m[1]!].length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const path = stack.join('');
    if (!m[3] || !path.startsWith('/api/v1')) continue;
    for (const method of m[3].split(', ')) routes.push([path, method]);
  }
  return routes;
}

const validated = new Set<string>();

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  json(): unknown;
}

/** Checks an answer against the document: its status is documented for the operation, its body and headers match. */
function conforms(method: string, url: string, res: Answer, responseName?: string): void {
  const path = url.split('?', 1)[0]!;
  const label = `${method} ${url} → ${res.statusCode}`;
  let pointer: string;
  let response: Json;
  if (responseName) {
    pointer = `#/components/responses/${responseName}`;
    response = doc.components.responses[responseName]!;
  } else {
    const found = pathItem(path);
    expect(found, `${label}: path documented`).toBeDefined();
    const operation = found!.item[method.toLowerCase()] as Json | undefined;
    expect(operation, `${label}: method documented`).toBeDefined();
    const responses = operation!.responses as Record<string, Json>;
    const documented = responses[String(res.statusCode)];
    expect(documented, `${label}: status documented`).toBeDefined();
    const ref = documented!.$ref;
    pointer = typeof ref === 'string' ? ref : `${found!.pointer}/${method.toLowerCase()}/responses/${res.statusCode}`;
    response = deref(documented!);
    validated.add(`${operation!.operationId} ${res.statusCode}`);
  }
  const validate = ajv.compile({ $ref: `openapi.json${pointer}/content/application~1json/schema` });
  const body = res.json();
  expect(validate(body), `${label}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`).toBe(
    true,
  );
  for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    if (deref(header).required) expect(res.headers[name.toLowerCase()], `${label}: header ${name}`).toBeDefined();
  }
}

async function call(
  app: TestApp,
  method: 'GET' | 'POST',
  url: string,
  options: { key?: string | null; payload?: string; contentType?: string } = {},
) {
  const headers: Record<string, string> = options.key === null ? {} : auth(options.key ?? apiKey);
  if (options.contentType) headers['content-type'] = options.contentType;
  return app.app.inject({ method, url, headers, payload: options.payload });
}

/** Requests `url` and checks the answer has `status` and conforms to the document. */
async function expectConforming(
  status: number,
  method: 'GET' | 'POST',
  url: string,
  options: Parameters<typeof call>[3] & { app?: TestApp; response?: string } = {},
) {
  const res = await call(options.app ?? t, method, url, options);
  expect(res.statusCode, `${method} ${url}: ${res.body.slice(0, 300)}`).toBe(status);
  conforms(method, url, res, options.response);
  return res.json() as Json;
}

// --- the tests ------------------------------------------------------------------------------------

describe('GET /api/v1/schema/', () => {
  it('needs a key, answers both slash forms and HEAD, and counts no search', async () => {
    expect((await call(t, 'GET', '/api/v1/schema/', { key: null })).statusCode).toBe(401);
    const plain = await call(t, 'GET', '/api/v1/schema');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
    expect(plain.json()).toEqual(doc);
    const head = await t.app.inject({ method: 'HEAD', url: '/api/v1/schema/', headers: auth(apiKey) });
    expect(head.statusCode).toBe(200);
    const user = await createUser(db.pool, { username: 'openapi-usage' });
    const key = (await issueApiKey(db.pool, user.id)).key;
    for (let i = 0; i < 3; i++) expect((await call(t, 'GET', '/api/v1/schema/', { key })).statusCode).toBe(200);
    await t.app.lifecycle.flush();
    expect(await monthlySearches(db.pool, user.id)).toBe(0);
  });

  it('names every operation once and says where the API is, for generated clients', () => {
    const ids: string[] = [];
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item as Record<string, { operationId?: string }>)) {
        if (operation.operationId) ids.push(operation.operationId);
      }
    }
    expect(ids.length).toBeGreaterThan(10);
    expect(new Set(ids).size).toBe(ids.length);
    expect((doc as unknown as { servers: unknown }).servers).toEqual([{ url: '/' }]);
  });

  it('is a valid OpenAPI 3.1 document whose schemas compile as JSON Schema 2020-12', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const validate = (spec: Json) => new Validator().validate(structuredClone(spec));
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Json);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toMatch(/^3\.1/);
    // The validator has teeth: a broken operation, parameter or reference is refused.
    const broken = structuredClone(doc) as unknown as { paths: Record<string, Record<string, Json>> };
    broken.paths['/api/v1/web']!.get!.responses = 'none';
    expect((await validate(broken)).valid).toBe(false);
    const badParameter = structuredClone(doc) as unknown as { paths: Record<string, Record<string, Json>> };
    (badParameter.paths['/api/v1/web']!.get!.parameters as Json[])[0]!.in = 'body';
    expect((await validate(badParameter)).valid).toBe(false);
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.compile({ $ref: `openapi.json#/components/schemas/${token(name)}` }), name).not.toThrow();
    }
  });

  it('describes every route under /api/v1 with its methods, and nothing else', () => {
    const routes = apiRoutes(t);
    expect(routes.length).toBeGreaterThan(30);
    const documented = new Set<string>();
    for (const [path, method] of routes) {
      // HEAD is answered like GET.
      const as = method === 'HEAD' ? 'get' : method.toLowerCase();
      const found = pathItem(path);
      expect(found, `${method} ${path}`).toBeDefined();
      expect(found!.item[as], `${method} ${path}`).toBeDefined();
      documented.add(`${as} ${path}`);
    }
    for (const [path, raw] of Object.entries(doc.paths)) {
      for (const method of Object.keys(raw.$ref ? deref(raw) : raw)) {
        expect(documented.has(`${method} ${path}`), `${method} ${path} is a route`).toBe(true);
      }
    }
    const ids = Object.values(doc.paths)
      .filter((raw) => !raw.$ref)
      .flatMap((item) => Object.values(item).map((op) => (op as Json).operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents the parameters from the validating schemas, with the key schemes', () => {
    const params = (path: string, method = 'get') =>
      Object.fromEntries(
        ((pathItem(path)!.item[method] as Json).parameters as Json[]).map((p) => [p.name, p]),
      ) as Record<string, Json & { schema: Json }>;
    const webParams = params('/api/v1/web/');
    expect(Object.keys(webParams)).toEqual(['q', 'engine', 'safe', 'lang', 'page', 'date', 'contents']);
    expect(webParams.q).toMatchObject({ in: 'query', required: true, schema: { type: 'string' } });
    expect(webParams.page!.required).toBe(false);
    expect(webParams.engine!.description).toContain('provider_01');
    expect(Object.keys(params('/api/v1/images/'))).toEqual(['q', 'engine', 'safe', 'lang', 'page']);
    expect(Object.values(params('/api/v1/maps/')).filter((p) => p.required)).toEqual([]);
    expect(Object.values(params('/api/v1/images/similar/')).filter((p) => p.required)).toEqual([]);
    const translate = params('/api/v1/translate/');
    expect([translate.q!.required, translate.text!.required, translate.target!.required]).toEqual([false, false, true]);
    const post = pathItem('/api/v1/translate/')!.item.post as Json & { requestBody: { content: Record<string, Json> } };
    expect(Object.keys(post.requestBody.content)).toEqual(['application/x-www-form-urlencoded', 'application/json']);
    // Both types share one named schema.
    const body = post.requestBody.content['application/json']!.schema as Json;
    expect(post.requestBody.content['application/x-www-form-urlencoded']!.schema).toEqual(body);
    expect(deref(body)).toMatchObject({ required: ['target'] });
    expect((pathItem('/api/v1/key/')!.item.get as Json).parameters).toBeUndefined();
    const schemes = (doc as unknown as { components: { securitySchemes: Json } }).components.securitySchemes;
    expect(schemes).toEqual({
      ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Authorization' }),
      Bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      XApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }),
    });
  });
});

describe('real answers validate against the document', () => {
  it('200: index, key, status, schema', async () => {
    const index = await expectConforming(200, 'GET', '/api/v1/');
    expect(index.web_search).toMatch(/\/api\/v1\/web\/$/);
    await expectConforming(200, 'GET', '/api/v1');
    await expectConforming(200, 'GET', '/api/v1/key/');
    const status = await expectConforming(200, 'GET', '/api/v1/status/');
    expect((status.providers as unknown[]).length).toBeGreaterThan(5);
    await expectConforming(200, 'GET', '/api/v1/schema/');
  });

  it('200: web, images, similar images, news, videos, suggest', async () => {
    const webBody = await expectConforming(200, 'GET', '/api/v1/web/?q=rust+language');
    expect((webBody.results as unknown[]).length).toBeGreaterThan(0);
    await expectConforming(200, 'GET', '/api/v1/web?q=rust+language&engine=provider_02&page=2&date=w&safe=off');
    for (const path of ['images', 'news', 'videos']) {
      const body = await expectConforming(200, 'GET', `/api/v1/${path}/?q=mountain+lake`);
      expect((body.results as unknown[]).length, path).toBeGreaterThan(0);
    }
    const similar = await expectConforming(
      200,
      'GET',
      '/api/v1/images/similar/?q=Mountain+lake+-+Example&exclude_url=x',
    );
    expect((similar.results as unknown[]).length).toBeGreaterThan(0);
    web.brave.setSuggestions('rus', ['rust', 'russia']);
    const suggest = await expectConforming(200, 'GET', '/api/v1/suggest/?q=rus');
    expect(suggest.suggestions).toEqual(['rust', 'russia']);
  });

  it('200: maps, reverse geocoding, translation (GET, form and JSON POST), languages', async () => {
    const maps = await expectConforming(200, 'GET', '/api/v1/maps/?q=Berlin&limit=3');
    expect((maps.places as unknown[]).length).toBeGreaterThan(0);
    await expectConforming(200, 'GET', '/api/v1/maps/?lat=52.5&lon=13.4&label=Here');
    await expectConforming(200, 'GET', '/api/v1/translate/?q=hello&target=fr');
    await expectConforming(200, 'POST', '/api/v1/translate/', {
      payload: 'q=hello&target=de&source=en',
      contentType: 'application/x-www-form-urlencoded',
    });
    await expectConforming(200, 'POST', '/api/v1/translate/', {
      payload: JSON.stringify({ text: 'hello', target: 'es' }),
      contentType: 'application/json',
    });
    const languages = await expectConforming(200, 'GET', '/api/v1/translate/languages/');
    expect((languages.languages as unknown[]).length).toBeGreaterThan(0);
  });

  it('200: instant answers of several kinds, and none', async () => {
    for (const q of [
      '2+2*3',
      '10 km in miles',
      'md5 hello',
      '#ff8800',
      'uuid',
      'weather in Berlin',
      '100 usd to eur',
      'flip a coin',
    ]) {
      const body = await expectConforming(200, 'GET', `/api/v1/instant/?${new URLSearchParams({ q })}`);
      expect(body.answer, q).not.toBeNull();
    }
    const none = await expectConforming(200, 'GET', '/api/v1/instant/?q=zzyzx+quorble');
    expect(none.answer).toBeNull();
  });

  it('200: every kind of knowledge card, and none', async () => {
    const kinds: [q: string, card: string][] = [
      ['jupiter', 'wikipedia'],
      ['breaking bad', 'thetvdb'],
      ['Eiffel Tower', 'tripadvisor'],
      ['python list comprehension', 'stackexchange'],
      ['Berlin', 'map'],
    ];
    for (const [q, card] of kinds) {
      const body = await expectConforming(200, 'GET', `/api/v1/cards/?${new URLSearchParams({ q })}`);
      expect(body[card], q).not.toBeNull();
    }
    const { unresponsive, ...none } = await expectConforming(200, 'GET', '/api/v1/cards/?q=zzyzx+quorble+nothing');
    expect(unresponsive).toEqual([]);
    expect(Object.values(none).filter((v) => v !== null)).toEqual(['zzyzx quorble nothing']);
  });

  it('200, 400, 502: page contents, one page and several', async () => {
    const page = (path: string) => `/api/v1/contents/?${new URLSearchParams({ url: `${site.url}${path}` })}`;
    const read = await expectConforming(200, 'GET', page('/article.html'));
    expect(read.content).not.toBe('');
    const batch = await expectConforming(200, 'POST', '/api/v1/contents/', {
      payload: JSON.stringify({ urls: [`${site.url}/article.html`, 'ftp://x/'] }),
      contentType: 'application/json',
    });
    expect(batch.failed).toHaveLength(1);
    const failed = await expectConforming(502, 'GET', page('/no-such-page.html'));
    expect(failed.reason).toBe('http_status');
    const refused = await expectConforming(400, 'GET', `/api/v1/contents/?url=${encodeURIComponent('ftp://x/')}`);
    expect(refused.reason).toBe('invalid_url');
  });

  it('400: invalid fields of each kind of endpoint', async () => {
    await expectConforming(400, 'GET', '/api/v1/web/');
    await expectConforming(400, 'GET', '/api/v1/web/?q=x&engine=bing&page=x');
    await expectConforming(400, 'GET', '/api/v1/images/similar/');
    await expectConforming(400, 'GET', '/api/v1/maps/?lat=x&lon=1');
    await expectConforming(400, 'GET', '/api/v1/translate/?q=hello');
    await expectConforming(400, 'POST', '/api/v1/translate/', { payload: '[1]', contentType: 'application/json' });
    await expectConforming(400, 'POST', '/api/v1/translate/', { payload: '{"q":', contentType: 'application/json' });
    await expectConforming(400, 'GET', '/api/v1/instant/');
    await expectConforming(400, 'GET', '/api/v1/cards/?q=x&engine=nope');
  });

  it('401, 403, 405, 415', async () => {
    await expectConforming(401, 'GET', '/api/v1/web/?q=x', { key: null });
    await expectConforming(401, 'GET', '/api/v1/key/', { key: 'svc_sk_nothere0.notasecret' });
    await expectConforming(403, 'GET', '/api/v1/maps/?q=Berlin', { key: disabledKey });
    const res = await call(t, 'POST', '/api/v1/web/');
    expect(res.statusCode).toBe(405);
    conforms('POST', '/api/v1/web/', res, 'MethodNotAllowed');
    await expectConforming(415, 'POST', '/api/v1/translate/', { payload: '<q/>', contentType: 'application/xml' });
  });

  it('404, 503: status page off, nothing configured', async () => {
    await expectConforming(404, 'GET', '/api/v1/status/', { app: bare, key: bareKey });
    for (const url of [
      '/api/v1/web/?q=x',
      '/api/v1/images/?q=x',
      '/api/v1/images/similar/?query=x',
      '/api/v1/news/?q=x',
      '/api/v1/videos/?q=x',
      '/api/v1/maps/?q=x',
      '/api/v1/translate/?q=x&target=fr',
    ]) {
      await expectConforming(503, 'GET', url, { app: bare, key: bareKey });
    }
    const unknown = await call(bare, 'GET', '/api/v1/nothing/', { key: bareKey });
    expect(unknown.statusCode).toBe(404);
    conforms('GET', '/api/v1/nothing/', unknown, 'NotFound');
  });

  it('429: a rate limit and the monthly quota', async () => {
    const limited = await buildTestApp(db, { API_THROTTLE_BURST: '1/min', API_MONTHLY_QUOTA: '1' });
    try {
      const user = await createUser(db.pool, { username: 'openapi-limited' });
      const one = (await issueApiKey(db.pool, user.id)).key;
      await expectConforming(200, 'GET', '/api/v1/key/', { app: limited, key: one });
      await expectConforming(429, 'GET', '/api/v1/key/', { app: limited, key: one });
      const other = await createUser(db.pool, { username: 'openapi-quota' });
      await db.pool.query('INSERT INTO usage_monthly (user_id, month, searches) VALUES ($1, $2::date, 5)', [
        other.id,
        monthStart(new Date()),
      ]);
      const two = (await issueApiKey(db.pool, other.id)).key;
      await expectConforming(429, 'GET', '/api/v1/instant/?q=uuid', { app: limited, key: two });
    } finally {
      await limited.close();
    }
  });

  it('502: every provider asked failed', async () => {
    web.mojeek.setMode({ kind: 'status', status: 500 });
    cards.nominatim.setMode({ kind: 'status', status: 500 });
    try {
      const webBody = await expectConforming(502, 'GET', '/api/v1/web/?q=outage+web&engine=provider_02');
      expect(webBody.unresponsive).toEqual([{ engine: 'provider_02', reason: 'error' }]);
      await expectConforming(502, 'GET', '/api/v1/maps/?q=outage+maps');
    } finally {
      web.mojeek.setMode({ kind: 'normal' });
      cards.nominatim.setMode({ kind: 'normal' });
    }
  });

  it('every operation was seen answering 200', () => {
    const ids = Object.values(doc.paths)
      .filter((raw) => !raw.$ref)
      .flatMap((item) => Object.values(item).map((op) => (op as Json).operationId as string));
    expect(ids.filter((id) => !validated.has(`${id} 200`))).toEqual([]);
  });
});

describe('a typed client generated from the document', () => {
  it('compiles against the generated types with the project TypeScript', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sift-openapi-'));
    try {
      const types = await openapiTS(structuredClone(doc) as never, { silent: true });
      await writeFile(join(dir, 'sift-api.ts'), types);
      await writeFile(join(dir, 'client.ts'), CLIENT_PROGRAM);
      await writeFile(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2023'],
            types: [],
            strict: true,
            noUncheckedIndexedAccess: true,
            noEmit: true,
          },
          files: ['sift-api.ts', 'client.ts'],
        }),
      );
      await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      const tsc = resolve('node_modules/.bin/tsc');
      const run = () =>
        execFileAsync(tsc, ['-p', join(dir, 'tsconfig.json')], { timeout: 60_000 }).then(
          () => '',
          (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}` || String(err),
        );
      expect(await run()).toBe('');
      // The check has teeth: a program misusing the types does not compile.
      await writeFile(join(dir, 'client.ts'), `${CLIENT_PROGRAM}\nexport const broken: WebResponse['page'] = 'one';\n`);
      expect(await run()).toMatch(/client\.ts.*error TS2322/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/** A small client of the API written against the generated types. */
const CLIENT_PROGRAM = `
import type { components, paths } from './sift-api.js';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: infer R } }
  ? Json<R>
  : never;
type Query<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

export type WebResponse = Ok<'/api/v1/web', 'get'>;
type WebQuery = Query<'/api/v1/web'>;

/** What a client does with the answers. */
export interface Transport {
  get(path: string): Promise<{ status: number; body: unknown }>;
}

function queryString(query: Record<string, string | number | undefined>): string {
  return Object.entries(query)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(String(v)))
    .join('&');
}

export async function searchWeb(transport: Transport, query: WebQuery): Promise<WebResponse> {
  const res = await transport.get('/api/v1/web/?' + queryString(query));
  if (res.status === 400) {
    const errors = res.body as Json<paths['/api/v1/web']['get']['responses'][400]>;
    throw new Error(errors.q ?? errors.engine ?? errors.page ?? 'bad request');
  }
  if (res.status === 502) {
    const failed = res.body as components['schemas']['AllProvidersFailed'];
    throw new Error(failed.detail + ': ' + failed.unresponsive.map((u) => u.engine + ' ' + u.reason).join(', '));
  }
  if (res.status !== 200) throw new Error((res.body as components['schemas']['Detail']).detail);
  return res.body as WebResponse;
}

export function titles(body: WebResponse): string[] {
  return body.results.map((r) => r.title + ' (' + r.source + ', ' + r.display_url + ')');
}

export function firstCard(body: Ok<'/api/v1/cards', 'get'>): string | null {
  return body.wikipedia?.title ?? body.thetvdb?.title ?? body.tripadvisor?.name ?? body.stackexchange?.title ?? body.map?.place.display_name ?? null;
}

export function answerKind(body: Ok<'/api/v1/instant', 'get'>): string {
  return body.answer === null ? 'none' : body.answer.type + ' for ' + body.answer.query;
}

export function nearest(body: Ok<'/api/v1/maps', 'get'>): [number, number] | null {
  const place = body.places[0];
  return place ? [place.lat, place.lon] : null;
}

export function remaining(body: Ok<'/api/v1/key', 'get'>): number {
  return Math.min(body.limits.burst.remaining, body.limits.sustained.remaining);
}

type TranslateForm = NonNullable<paths['/api/v1/translate']['post']['requestBody']>['content']['application/json'];
export const form: TranslateForm = { q: 'hello', target: 'fr' };
export const translated = (body: Ok<'/api/v1/translate', 'post'>): string => body.translated_text;

export const sample: WebResponse = {
  query: 'rust',
  tab: 'web',
  page: 1,
  engine: ['provider_01', 'provider_02'],
  correction: '',
  results: [],
  unresponsive: [{ engine: 'provider_03', reason: 'timeout' }],
};
// @ts-expect-error the tab of a web response is "web"
export const wrongTab: WebResponse = { ...sample, tab: 'images' };
// @ts-expect-error q is required
export const noQuery: WebQuery = { page: 2 };
// @ts-expect-error page is an integer
export const textPage: WebQuery = { q: 'rust', page: '2' };
// @ts-expect-error not a date filter
export const badDate: WebQuery = { q: 'rust', date: 'century' };
// @ts-expect-error not an engine
export const badEngine: WebResponse['engine'] = ['bing'];
`;
