import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

/*
 * GET /api/v1/schema/ as the mainstream OpenAPI tools take it, each run as its users run it (its
 * CLI from test/clients, a package of its own installed by .ci/run; these tests are skipped
 * without it): Redocly's recommended rules report no error; the types of openapi-typescript (with
 * openapi-fetch) and orval's fetch and axios clients are generated from the document the app serves,
 * compile with the project's TypeScript, and call every operation of the document against the app
 * listening on 127.0.0.1, every answer a 200 read through the generated types.
 */

const CLIENTS_DIR = path.resolve(import.meta.dirname, '../clients');
const BIN = path.join(CLIENTS_DIR, 'node_modules', '.bin');
const TSC = path.resolve('node_modules/.bin/tsc');
const installed = ['redocly', 'orval', 'openapi-typescript'].every((bin) => existsSync(path.join(BIN, bin)));
const execFileAsync = promisify(execFile);

type Json = Record<string, unknown>;

interface Ran {
  ok: boolean;
  stdout: string;
  /** stdout and stderr. */
  output: string;
}

/** Runs a command: whether it exited 0, and what it printed. */
async function run(file: string, args: string[], cwd: string): Promise<Ran> {
  try {
    const { stdout, stderr } = await execFileAsync(file, args, { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, stdout, output: `${stdout}${stderr}` };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, stdout: e.stdout ?? '', output: `${e.stdout ?? ''}${e.stderr ?? ''}` || String(error) };
  }
}

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    types: [],
    strict: true,
    skipLibCheck: false,
    outDir: 'out',
  },
  include: ['*.ts'],
};

describe.runIf(!installed)('clients generated from the OpenAPI document', () => {
  it('are skipped: their generators are not installed (run `npm ci --prefix test/clients`)', () => {
    expect(installed).toBe(false);
  });
});

describe.runIf(installed)('clients generated from the OpenAPI document', () => {
  let db: TestDatabase;
  let fakes: AllFakes;
  let t: TestApp;
  let base: string;
  let key: string;
  let dir: string;
  let doc: Json & { paths: Record<string, Record<string, { operationId: string }>> };

  beforeAll(async () => {
    db = await createTestDatabase();
    fakes = await startAllFakes();
    // The search endpoints' document: page contents (which read pages of the open web, not the fakes)
    // are off, so their operations are not in it; test/api/openapi.test.ts validates their answers.
    t = await buildTestApp(db, {
      ...fakes.env,
      API_THROTTLE_BURST: '10000/min',
      API_THROTTLE_SUSTAINED: '100000/day',
      CONTENTS_ENABLED: 'false',
    });
    base = await listen(t.app);
    const user = await createUser(db.pool, { username: 'generated-clients' });
    key = (await issueApiKey(db.pool, user.id)).key;
    const res = await fetch(`${base}/api/v1/schema/`, { headers: { authorization: `Api-Key ${key}` } });
    expect(res.status).toBe(200);
    doc = (await res.json()) as typeof doc;
    // Inside test/clients, so that the programs resolve openapi-fetch from its node_modules.
    dir = await mkdtemp(path.join(CLIENTS_DIR, '.generated-'));
    await writeFile(path.join(dir, 'openapi.json'), JSON.stringify(doc));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    await t?.close();
    await fakes?.close();
    await db?.drop();
  });

  const operationIds = () =>
    Object.values(doc.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));

  it("passes Redocly's recommended rules with no error, and Redocly has teeth", async () => {
    const lint = (file: string) =>
      run(path.join(BIN, 'redocly'), ['lint', file, '--extends=recommended', '--format=json'], dir);
    const result = await lint('openapi.json');
    expect(result.ok, result.output).toBe(true);
    const report = JSON.parse(result.stdout) as { totals: { errors: number } };
    expect(report.totals.errors, result.output).toBe(0);
    // An operationId used twice (what the slash-less copies of each path once did) is an error.
    const twice = structuredClone(doc);
    twice.paths['/api/v1/key']!.get!.operationId = 'webSearch';
    await writeFile(path.join(dir, 'twice.json'), JSON.stringify(twice));
    const refused = await lint('twice.json');
    expect(refused.ok).toBe(false);
    expect(refused.output).toContain('operation-operationId-unique');
  }, 120_000);

  it('types integer and enum parameters as such', () => {
    const parameter = (p: string, name: string) =>
      ((doc.paths[p]!.get as unknown as { parameters: { name: string; schema: Json }[] }).parameters.find(
        (x) => x.name === name,
      )?.schema ?? {}) as Json;
    expect(parameter('/api/v1/web', 'page')).toMatchObject({ type: 'integer', minimum: 1, maximum: 50 });
    expect(parameter('/api/v1/maps', 'limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 50 });
    expect(parameter('/api/v1/maps', 'lat')).toMatchObject({ type: 'number', minimum: -90, maximum: 90 });
    expect(parameter('/api/v1/news', 'date')).toMatchObject({ type: 'string', enum: ['d', 'w', 'm', 'y'] });
    expect(parameter('/api/v1/images', 'safe').enum).toContain('off');
    expect(new Set(operationIds()).size).toBe(operationIds().length);
  });

  it('openapi-typescript with openapi-fetch, and orval (fetch and axios), compile and call every operation', async () => {
    const types = await run(path.join(BIN, 'openapi-typescript'), ['openapi.json', '-o', 'sift-api.ts'], dir);
    expect(types.ok, types.output).toBe(true);
    const orvalConfig = {
      sift: {
        input: { target: './openapi.json' },
        output: { target: './orval.ts', client: 'fetch', mode: 'single', baseUrl: base },
      },
      // orval's default client: axios.
      siftAxios: { input: { target: './openapi.json' }, output: { target: './orval-axios.ts', mode: 'single' } },
    };
    await writeFile(path.join(dir, 'orval.config.mjs'), `export default ${JSON.stringify(orvalConfig)};\n`);
    const orval = await run(path.join(BIN, 'orval'), ['--config', 'orval.config.mjs'], dir);
    expect(orval.ok, orval.output).toBe(true);

    await writeFile(path.join(dir, 'main.ts'), CLIENTS_PROGRAM);
    const compiled = await run(TSC, ['-p', 'tsconfig.json'], dir);
    expect(compiled.ok, compiled.output).toBe(true);
    const ran = await run(process.execPath, ['out/main.js', base, key], dir);
    expect(ran.ok, ran.output).toBe(true);
    const calls = JSON.parse(ran.stdout) as Record<
      'orval' | 'orvalAxios' | 'openapiFetch',
      Record<string, [number, unknown]>
    >;

    for (const client of ['orval', 'orvalAxios', 'openapiFetch'] as const) {
      const answers = calls[client];
      // Every operation of the document was called, and each answered 200.
      expect(Object.keys(answers).sort(), client).toEqual(operationIds().sort());
      for (const [id, [status]] of Object.entries(answers)) expect(status, `${client} ${id}`).toBe(200);
      expect(answers.webSearch![1], client).toBeGreaterThan(0);
      expect(answers.maps![1], client).toEqual([expect.closeTo(52.5, 1), expect.closeTo(13.4, 1)]);
      expect(answers.translatePost![1], client).toEqual(expect.any(String));
      expect(answers.openApiDocument![1], client).toBe('3.1.0');
      expect(answers.cards![1], client).toBe('Jupiter');
    }

    // The types have teeth: a page as text, a date not among d, w, m, y, do not compile.
    await writeFile(
      path.join(dir, 'broken.ts'),
      `import { webSearch } from './orval.js';
import createClient from 'openapi-fetch';
import type { paths } from './sift-api.js';
export const a = webSearch({ q: 'x', page: 'two' });
export const b = createClient<paths>().GET('/api/v1/web', { params: { query: { q: 'x', date: 'century' } } });
`,
    );
    const broken = await run(TSC, ['-p', 'tsconfig.json', '--noEmit'], dir);
    expect(broken.ok).toBe(false);
    expect(broken.output).toMatch(/broken\.ts\(4,[^)]*\): error TS2322/);
    expect(broken.output).toMatch(/broken\.ts\(5,[^)]*\): error TS2322/);
  }, 240_000);
});

/**
 * Calls every operation with each generated client; prints, per client and operationId, the status
 * and one value read from the body through the generated types.
 */
const CLIENTS_PROGRAM = `
import createClient from 'openapi-fetch';
import type { paths } from './sift-api.js';
import * as orval from './orval.js';
import * as orvalAxios from './orval-axios.js';

// Node's, declared here rather than with @types/node: the program needs only these.
declare const process: { argv: string[]; stdout: { write(text: string): void } };

const [base, key] = process.argv.slice(2) as [string, string];
const headers = { authorization: 'Api-Key ' + key };
const init = { headers };
type Answer = [status: number, value: unknown];

async function withOrval(): Promise<Record<string, Answer>> {
  const index = await orval.apiIndex(init);
  const web = await orval.webSearch({ q: 'rust language', page: 1, date: 'w', safe: 'off' }, init);
  const images = await orval.imageSearch({ q: 'mountain lake', page: 2 }, init);
  const similar = await orval.similarImageSearch({ q: 'Mountain lake - Example', exclude_url: 'x' }, init);
  const news = await orval.newsSearch({ q: 'mountain lake', engine: 'all' }, init);
  const videos = await orval.videoSearch({ q: 'mountain lake', date: 'y' }, init);
  const maps = await orval.maps({ lat: 52.5, lon: 13.4, label: 'Here' }, init);
  const geocoded = await orval.maps({ q: 'Berlin', limit: 3 }, init);
  const translated = await orval.translate({ q: 'hello', target: 'fr' }, init);
  // Sent as a form, the first of the two body types documented.
  const posted = await orval.translatePost({ text: 'hello', target: 'de' }, init);
  const languages = await orval.translateLanguages(init);
  const instant = await orval.instant({ q: '2+2*3' }, init);
  const cards = await orval.cards({ q: 'jupiter' }, init);
  const suggest = await orval.suggest({ q: 'rus' }, init);
  const status = await orval.providerStatus(init);
  const keyInfo = await orval.key(init);
  const schema = await orval.openApiDocument(init);
  return {
    apiIndex: [index.status, index.status === 200 ? index.data.web_search : null],
    webSearch: [web.status, web.status === 200 ? web.data.results.length : null],
    imageSearch: [images.status, images.status === 200 ? images.data.page : null],
    similarImageSearch: [similar.status, similar.status === 200 ? similar.data.results.length : null],
    newsSearch: [news.status, news.status === 200 ? news.data.results.length : null],
    videoSearch: [videos.status, videos.status === 200 ? videos.data.results.length : null],
    maps: [
      maps.status === 200 && geocoded.status === 200 ? 200 : maps.status,
      maps.status === 200 ? [maps.data.places[0]?.lat, maps.data.places[0]?.lon] : null,
    ],
    translate: [translated.status, translated.status === 200 ? translated.data.translated_text : null],
    translatePost: [posted.status, posted.status === 200 ? posted.data.translated_text : null],
    translateLanguages: [languages.status, languages.status === 200 ? languages.data.languages.length : null],
    instant: [instant.status, instant.status === 200 ? instant.data.answer?.type : null],
    cards: [cards.status, cards.status === 200 ? cards.data.wikipedia?.title : null],
    suggest: [suggest.status, suggest.status === 200 ? suggest.data.suggestions : null],
    providerStatus: [status.status, status.status === 200 ? status.data.providers.length : null],
    key: [keyInfo.status, keyInfo.status === 200 ? keyInfo.data.limits.burst.remaining : null],
    openApiDocument: [schema.status, schema.status === 200 ? schema.data.openapi : null],
  };
}

async function withOrvalAxios(): Promise<Record<string, Answer>> {
  const o = { baseURL: base, headers, validateStatus: () => true };
  const index = await orvalAxios.apiIndex(o);
  const web = await orvalAxios.webSearch({ q: 'rust language', page: 1, date: 'w', safe: 'off' }, o);
  const images = await orvalAxios.imageSearch({ q: 'mountain lake', page: 2 }, o);
  const similar = await orvalAxios.similarImageSearch({ q: 'Mountain lake - Example', exclude_url: 'x' }, o);
  const news = await orvalAxios.newsSearch({ q: 'mountain lake', engine: 'all' }, o);
  const videos = await orvalAxios.videoSearch({ q: 'mountain lake', date: 'y' }, o);
  const maps = await orvalAxios.maps({ lat: 52.5, lon: 13.4, label: 'Here' }, o);
  const geocoded = await orvalAxios.maps({ q: 'Berlin', limit: 3 }, o);
  const translated = await orvalAxios.translate({ q: 'hello', target: 'fr' }, o);
  const posted = await orvalAxios.translatePost({ text: 'hello', target: 'de' }, o);
  const languages = await orvalAxios.translateLanguages(o);
  const instant = await orvalAxios.instant({ q: '2+2*3' }, o);
  const cards = await orvalAxios.cards({ q: 'jupiter' }, o);
  const suggest = await orvalAxios.suggest({ q: 'rus' }, o);
  const status = await orvalAxios.providerStatus(o);
  const keyInfo = await orvalAxios.key(o);
  const schema = await orvalAxios.openApiDocument(o);
  return {
    apiIndex: [index.status, index.data.web_search],
    webSearch: [web.status, web.data.results.length],
    imageSearch: [images.status, images.data.page],
    similarImageSearch: [similar.status, similar.data.results.length],
    newsSearch: [news.status, news.data.results.length],
    videoSearch: [videos.status, videos.data.results.length],
    maps: [
      geocoded.status === 200 ? maps.status : geocoded.status,
      [maps.data.places[0]?.lat, maps.data.places[0]?.lon],
    ],
    translate: [translated.status, translated.data.translated_text],
    translatePost: [posted.status, posted.data.translated_text],
    translateLanguages: [languages.status, languages.data.languages.length],
    instant: [instant.status, instant.data.answer?.type],
    cards: [cards.status, cards.data.wikipedia?.title],
    suggest: [suggest.status, suggest.data.suggestions],
    providerStatus: [status.status, status.data.providers.length],
    key: [keyInfo.status, keyInfo.data.limits.burst.remaining],
    openApiDocument: [schema.status, schema.data.openapi],
  };
}

async function withOpenapiFetch(): Promise<Record<string, Answer>> {
  const client = createClient<paths>({ baseUrl: base, headers });
  const index = await client.GET('/api/v1');
  const web = await client.GET('/api/v1/web', { params: { query: { q: 'rust language', page: 1, date: 'w', safe: 'off' } } });
  const images = await client.GET('/api/v1/images', { params: { query: { q: 'mountain lake', page: 2 } } });
  const similar = await client.GET('/api/v1/images/similar', {
    params: { query: { q: 'Mountain lake - Example', exclude_url: 'x' } },
  });
  const news = await client.GET('/api/v1/news', { params: { query: { q: 'mountain lake', engine: 'all' } } });
  const videos = await client.GET('/api/v1/videos', { params: { query: { q: 'mountain lake', date: 'y' } } });
  const maps = await client.GET('/api/v1/maps', { params: { query: { lat: 52.5, lon: 13.4, label: 'Here' } } });
  const geocoded = await client.GET('/api/v1/maps', { params: { query: { q: 'Berlin', limit: 3 } } });
  const translated = await client.GET('/api/v1/translate', { params: { query: { q: 'hello', target: 'fr' } } });
  const posted = await client.POST('/api/v1/translate', { body: { text: 'hello', target: 'de' } });
  const languages = await client.GET('/api/v1/translate/languages');
  const instant = await client.GET('/api/v1/instant', { params: { query: { q: '2+2*3' } } });
  const cards = await client.GET('/api/v1/cards', { params: { query: { q: 'jupiter' } } });
  const suggest = await client.GET('/api/v1/suggest', { params: { query: { q: 'rus' } } });
  const status = await client.GET('/api/v1/status');
  const keyInfo = await client.GET('/api/v1/key');
  const schema = await client.GET('/api/v1/schema');
  return {
    apiIndex: [index.response.status, index.data?.web_search],
    webSearch: [web.response.status, web.data?.results.length],
    imageSearch: [images.response.status, images.data?.page],
    similarImageSearch: [similar.response.status, similar.data?.results.length],
    newsSearch: [news.response.status, news.data?.results.length],
    videoSearch: [videos.response.status, videos.data?.results.length],
    maps: [
      geocoded.response.status === 200 ? maps.response.status : geocoded.response.status,
      maps.data ? [maps.data.places[0]?.lat, maps.data.places[0]?.lon] : null,
    ],
    translate: [translated.response.status, translated.data?.translated_text],
    translatePost: [posted.response.status, posted.data?.translated_text],
    translateLanguages: [languages.response.status, languages.data?.languages.length],
    instant: [instant.response.status, instant.data?.answer?.type],
    cards: [cards.response.status, cards.data?.wikipedia?.title],
    suggest: [suggest.response.status, suggest.data?.suggestions],
    providerStatus: [status.response.status, status.data?.providers.length],
    key: [keyInfo.response.status, keyInfo.data?.limits.burst.remaining],
    openApiDocument: [schema.response.status, schema.data?.openapi],
  };
}

const result = { orval: await withOrval(), orvalAxios: await withOrvalAxios(), openapiFetch: await withOpenapiFetch() };
process.stdout.write(JSON.stringify(result));
`;
