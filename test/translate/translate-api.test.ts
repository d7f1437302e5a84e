import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { monthlySearches } from '../../src/limits/usage.js';
import { LANGUAGES, type LibreTranslateFake, startLibreTranslateFake } from '../fakes/libretranslate.js';
import { buildTestApp, type TestApp, UNTHROTTLED, providerStatusRow } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const KEY = 'lt-secret-key-123456';
const UNAVAILABLE = { detail: 'Translation is unavailable or not configured on this deployment.' };
const REQUIRED_TEXT = { q: 'This parameter is required (the text to translate).' };
const REQUIRED_TARGET = { target: 'This parameter is required (target language code).' };

const FALLBACK = [
  { code: 'en', name: 'English' },
  { code: 'fr', name: 'French' },
  { code: 'de', name: 'German' },
  { code: 'es', name: 'Spanish' },
  { code: 'it', name: 'Italian' },
  { code: 'pt', name: 'Portuguese' },
  { code: 'nl', name: 'Dutch' },
  { code: 'ru', name: 'Russian' },
  { code: 'ar', name: 'Arabic' },
  { code: 'zh', name: 'Chinese' },
  { code: 'ja', name: 'Japanese' },
  { code: 'ko', name: 'Korean' },
  { code: 'pl', name: 'Polish' },
  { code: 'tr', name: 'Turkish' },
  { code: 'uk', name: 'Ukrainian' },
];

let db: TestDatabase;
let fake: LibreTranslateFake;
let t: TestApp;
let apiKey: string;
let userId: number;

interface Res {
  status: number;
  headers: Record<string, unknown>;
  body: Record<string, unknown>;
}

async function send(
  method: 'GET' | 'POST' | 'HEAD',
  path: string,
  options: { payload?: string | Buffer; contentType?: string; app?: TestApp } = {},
): Promise<Res> {
  const headers: Record<string, string> = { authorization: `Api-Key ${apiKey}` };
  if (options.contentType) headers['content-type'] = options.contentType;
  const res = await (options.app ?? t).app.inject({ method, url: path, headers, payload: options.payload });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: method === 'HEAD' ? {} : (res.json() as Record<string, unknown>),
  };
}
const getTranslate = (params: Record<string, string>, app?: TestApp) =>
  send('GET', `/api/v1/translate/?${new URLSearchParams(params)}`, { app });
const postJson = (payload: unknown, app?: TestApp) =>
  send('POST', '/api/v1/translate/', { payload: JSON.stringify(payload), contentType: 'application/json', app });
const postForm = (fields: Record<string, string>, app?: TestApp) =>
  send('POST', '/api/v1/translate/', {
    payload: new URLSearchParams(fields).toString(),
    contentType: 'application/x-www-form-urlencoded',
    app,
  });
const languages = (app?: TestApp) => send('GET', '/api/v1/translate/languages/', { app });

async function usage(app: TestApp = t): Promise<number> {
  await t.app.lifecycle.flush();
  await app.app.lifecycle.flush();
  return monthlySearches(db.pool, userId);
}

const healthRow = () => providerStatusRow(t, db, 'translate');

const translations = () => fake.requests.filter((r) => r.path === '/translate');

beforeAll(async () => {
  db = await createTestDatabase();
  fake = await startLibreTranslateFake();
  fake.requiredKey = KEY;
  t = await buildTestApp(db, {
    ...UNTHROTTLED,
    LIBRETRANSLATE_URL: fake.url,
    LIBRETRANSLATE_API_KEY: KEY,
    PROVIDER_TIMEOUT_MS: '500',
  });
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'translator'));
});

afterEach(() => {
  fake.setMode({ kind: 'normal' });
  fake.setMode({ kind: 'normal' }, '/translate');
  fake.setMode({ kind: 'normal' }, '/languages');
  fake.languages = LANGUAGES;
  fake.alwaysDetect = false;
  fake.requests.length = 0;
  t.app.searchCache.clear();
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
  await db?.drop();
});

describe('GET /api/v1/translate/', () => {
  it('translates with LibreTranslate and answers {source, target, translated_text, detected_lang}', async () => {
    const res = await getTranslate({ q: ' Hello world ', target: 'de' });
    expect(res).toMatchObject({
      status: 200,
      body: { source: 'auto', target: 'de', translated_text: 'Hallo Welt', detected_lang: 'en' },
    });
    expect(Object.keys(res.body)).toEqual(['source', 'target', 'translated_text', 'detected_lang']);
    const [req] = translations();
    expect(req!.method).toBe('POST');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.body).toBe(
      JSON.stringify({ q: 'Hello world', source: 'auto', target: 'de', format: 'text', api_key: KEY }),
    );
  });

  it('fills detected_lang only when the source was auto', async () => {
    fake.alwaysDetect = true;
    expect((await getTranslate({ q: 'bonjour', target: 'en', source: 'fr' })).body).toEqual({
      source: 'fr',
      target: 'en',
      translated_text: 'Hello',
      detected_lang: '',
    });
    expect((await getTranslate({ q: 'bonjour', target: 'en', source: ' ' })).body).toEqual({
      source: 'auto',
      target: 'en',
      translated_text: 'Hello',
      detected_lang: 'fr',
    });
    expect(JSON.parse(translations()[0]!.body)).toMatchObject({ source: 'fr' });
  });

  it('takes text when q is absent, and q over text', async () => {
    expect((await getTranslate({ text: 'bonjour', target: 'es' })).body).toMatchObject({ translated_text: 'Hola' });
    expect((await getTranslate({ q: 'hello world', text: 'bonjour', target: 'es' })).body).toMatchObject({
      translated_text: 'Hola mundo',
    });
  });

  it('caches a translation for an hour', async () => {
    await getTranslate({ q: 'Hello world', target: 'fr' });
    const again = await getTranslate({ q: 'Hello world', target: 'fr' });
    expect(again.body).toMatchObject({ translated_text: 'Bonjour le monde' });
    expect(translations()).toHaveLength(1);
    await getTranslate({ q: 'Hello world', target: 'fr', source: 'en' });
    expect(translations()).toHaveLength(2);
  });

  it('validates q (or text) and target: 400, all at once, no call, no usage', async () => {
    const before = await usage();
    expect(await getTranslate({ target: 'de' })).toMatchObject({ status: 400, body: REQUIRED_TEXT });
    expect((await getTranslate({ q: '  ', text: ' ', target: 'de' })).body).toEqual(REQUIRED_TEXT);
    expect((await getTranslate({ q: 'hi' })).body).toEqual(REQUIRED_TARGET);
    expect((await getTranslate({ q: 'hi', target: '  ' })).body).toEqual(REQUIRED_TARGET);
    expect((await getTranslate({})).body).toEqual({ ...REQUIRED_TEXT, ...REQUIRED_TARGET });
    expect(fake.requests).toHaveLength(0);
    expect(await usage()).toBe(before);
  });

  it('refuses text over 5,000 characters before any upstream call', async () => {
    const before = await usage();
    expect(await getTranslate({ q: 'a'.repeat(5001), target: 'de' })).toMatchObject({
      status: 400,
      body: { q: 'Ensure this value has at most 5000 characters.' },
    });
    expect((await postJson({ text: `  ${'b'.repeat(5001)}  `, target: 'de' })).body).toEqual({
      text: 'Ensure this value has at most 5000 characters.',
    });
    expect(fake.requests).toHaveLength(0);
    expect(await usage()).toBe(before);
    // 5,000 characters (counted as code points) are fine.
    expect((await postJson({ q: 'a'.repeat(5000), target: 'de' })).status).toBe(200);
    expect((await postJson({ q: '😀'.repeat(5000), target: 'de' })).status).toBe(200);
  });

  it('answers HEAD and both slash forms', async () => {
    expect((await send('GET', '/api/v1/translate?q=hello%20world&target=de')).status).toBe(200);
    expect((await send('HEAD', '/api/v1/translate/?q=hello%20world&target=de')).status).toBe(200);
    expect((await t.app.inject({ url: '/api/v1/translate/?q=x&target=de' })).statusCode).toBe(401);
  });
});

describe('POST /api/v1/translate/', () => {
  it('takes form-encoded fields', async () => {
    const res = await postForm({ q: 'Hello world', target: 'es', source: 'en' });
    expect(res).toMatchObject({
      status: 200,
      body: { source: 'en', target: 'es', translated_text: 'Hola mundo', detected_lang: '' },
    });
    expect(JSON.parse(translations()[0]!.body)).toEqual({
      q: 'Hello world',
      source: 'en',
      target: 'es',
      format: 'text',
      api_key: KEY,
    });
    expect((await postForm({ text: 'bonjour', target: 'de' })).body).toMatchObject({ translated_text: 'Hallo' });
    const repeated = await send('POST', '/api/v1/translate/', {
      payload: 'q=ignored&q=bonjour&target=en',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(repeated.body).toMatchObject({ translated_text: 'Hello' });
    expect((await postForm({ target: 'de' })).body).toEqual(REQUIRED_TEXT);
  });

  it('takes a JSON object (null values count as absent)', async () => {
    expect(await postJson({ q: 'bonjour', target: 'en' })).toMatchObject({
      status: 200,
      body: { source: 'auto', target: 'en', translated_text: 'Hello', detected_lang: 'fr' },
    });
    expect((await postJson({ q: null, text: 'bonjour', target: 'es', source: null, extra: 5 })).body).toMatchObject({
      source: 'auto',
      translated_text: 'Hola',
    });
    const charset = await send('POST', '/api/v1/translate/', {
      payload: JSON.stringify({ q: 'bonjour', target: 'de' }),
      contentType: 'application/json; charset=utf-8',
    });
    expect(charset.body).toMatchObject({ translated_text: 'Hallo' });
  });

  it('never answers 500 to malformed or unexpected bodies (400 or 415, JSON), and counts nothing', async () => {
    const before = await usage();
    const cases: [string | Buffer | undefined, string | undefined, number, Record<string, unknown>][] = [
      ['{"q": "x", "target":', 'application/json', 400, { detail: 'Request body is not valid JSON.' }],
      // An empty body is no body: the fields are missing (as with no body at all).
      ['', 'application/json', 400, { ...REQUIRED_TEXT, ...REQUIRED_TARGET }],
      ['[1, 2]', 'application/json', 400, { detail: 'The request body must be a JSON object or form-encoded fields.' }],
      [
        '"hello"',
        'application/json',
        400,
        { detail: 'The request body must be a JSON object or form-encoded fields.' },
      ],
      ['null', 'application/json', 400, { detail: 'The request body must be a JSON object or form-encoded fields.' }],
      ['42', 'application/json', 400, { detail: 'The request body must be a JSON object or form-encoded fields.' }],
      ['{"q": 5, "target": "de"}', 'application/json', 400, { q: 'Must be a string.' }],
      [
        '{"q": ["a", 1], "target": {"x": 1}}',
        'application/json',
        400,
        { q: 'Must be a string.', target: 'Must be a string.' },
      ],
      ['{"q": true, "source": []}', 'application/json', 400, { q: 'Must be a string.' }],
      ['q=hello&target=de', 'text/plain', 415, { detail: 'Unsupported media type.' }],
      ['<q>hello</q>', 'application/xml', 415, { detail: 'Unsupported media type.' }],
      [
        '--b\r\nContent-Disposition: form-data; name="q"\r\n\r\nhello\r\n--b--\r\n',
        'multipart/form-data; boundary=b',
        415,
        { detail: 'Unsupported media type.' },
      ],
      [undefined, undefined, 400, { ...REQUIRED_TEXT, ...REQUIRED_TARGET }],
      ['%zz=%%&target', 'application/x-www-form-urlencoded', 400, { ...REQUIRED_TEXT, ...REQUIRED_TARGET }],
      [
        '{"__proto__": {"q": "x"}, "target": "de"}',
        'application/json',
        400,
        { detail: 'Request body is not valid JSON.' },
      ],
    ];
    for (const [payload, contentType, status, body] of cases) {
      const res = await send('POST', '/api/v1/translate/', { payload, contentType });
      expect({ payload, status: res.status, body: res.body }).toEqual({ payload, status, body });
    }
    const huge = await send('POST', '/api/v1/translate/', {
      payload: JSON.stringify({ q: 'x'.repeat(300 * 1024), target: 'de' }),
      contentType: 'application/json',
    });
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({ detail: 'Request body is too large.' });
    expect(fake.requests).toHaveLength(0);
    expect(await usage()).toBe(before);
  });

  it('reads a POST from its body only, never the query string', async () => {
    expect((await send('POST', '/api/v1/translate/?q=hello&target=de', {})).body).toEqual({
      ...REQUIRED_TEXT,
      ...REQUIRED_TARGET,
    });
  });
});

describe('translation unavailable', () => {
  it('answers 503 with the exact detail when LibreTranslate fails, counts the request, records the failure', async () => {
    const modes = [
      { kind: 'status', status: 500, body: { error: 'Cannot translate text: boom' } },
      { kind: 'status', status: 400, body: { error: 'xx is not supported' } },
      { kind: 'status', status: 429, body: { error: 'Slowdown: 20 per 1 minute' } },
      { kind: 'garbage' },
      { kind: 'reset' },
      { kind: 'hang' },
    ] as const;
    const before = await usage();
    for (const mode of modes) {
      fake.setMode(mode, '/translate');
      const res = await getTranslate({ q: 'hello world', target: 'de' });
      expect({ mode: mode.kind, status: res.status, body: res.body }).toEqual({
        mode: mode.kind,
        status: 503,
        body: UNAVAILABLE,
      });
    }
    expect(await usage()).toBe(before + modes.length);
    expect(await healthRow()).toMatchObject({ ok: false });
  });

  it("answers the spec's 503 for a language the backend lacks, never recording the backend as failing", async () => {
    expect((await getTranslate({ q: 'hello world', target: 'de' })).status).toBe(200);
    expect(await healthRow()).toMatchObject({ ok: true });
    const refused: Record<string, string>[] = [
      { q: 'hello world', target: 'zz' },
      { q: 'hello world', target: 'zz' },
      { q: 'bonjour', source: 'yy', target: 'de' },
    ];
    for (const params of refused) {
      expect(await getTranslate(params)).toMatchObject({ status: 503, body: UNAVAILABLE });
    }
    expect(translations()).toHaveLength(4);
    expect(await healthRow()).toMatchObject({ ok: true, last_error: '' });
    // Not suspended either: the next translation is asked for at once.
    expect((await getTranslate({ q: 'bonjour', target: 'es' })).status).toBe(200);
    expect(translations()).toHaveLength(5);
  });

  it('answers 503 for a refused key or an answer without a translation, and never leaks the key', async () => {
    fake.setMode({ kind: 'status', status: 403, body: { error: `Invalid API key ${KEY}` } }, '/translate');
    expect(await postJson({ q: 'hello world', target: 'de' })).toMatchObject({ status: 503, body: UNAVAILABLE });
    const row = await healthRow();
    expect(row?.ok).toBe(false);
    expect(row?.last_error).not.toContain(KEY);

    fake.setMode({ kind: 'status', status: 200, body: { detectedLanguage: { language: 'en' } } }, '/translate');
    expect(await postJson({ q: 'hello world', target: 'de' })).toMatchObject({ status: 503, body: UNAVAILABLE });
  });

  it('answers 503 and counts one search when no backend is configured or it is disabled', async () => {
    const envs: Record<string, string>[] = [{}, { LIBRETRANSLATE_URL: fake.url, DISABLED_PROVIDERS: 'translate' }];
    for (const env of envs) {
      const app = await buildTestApp(db, { ...UNTHROTTLED, ...env });
      try {
        const before = await usage(app);
        expect(await getTranslate({ q: 'hello world', target: 'de' }, app)).toMatchObject({
          status: 503,
          body: UNAVAILABLE,
        });
        expect(await postForm({ q: 'hello world', target: 'de' }, app)).toMatchObject({
          status: 503,
          body: UNAVAILABLE,
        });
        // Validation still comes first (and counts nothing).
        expect(await getTranslate({ target: 'de' }, app)).toMatchObject({ status: 400, body: REQUIRED_TEXT });
        expect(await usage(app)).toBe(before + 2);
        expect(await languages(app)).toMatchObject({ status: 200, body: { languages: FALLBACK } });
      } finally {
        await app.close();
      }
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('sends no api_key when LIBRETRANSLATE_API_KEY is unset', async () => {
    fake.requiredKey = '';
    const app = await buildTestApp(db, { ...UNTHROTTLED, LIBRETRANSLATE_URL: fake.url });
    try {
      expect((await getTranslate({ q: 'hello world', target: 'de' }, app)).status).toBe(200);
      expect(JSON.parse(translations()[0]!.body)).toEqual({
        q: 'hello world',
        source: 'auto',
        target: 'de',
        format: 'text',
      });
    } finally {
      fake.requiredKey = KEY;
      await app.close();
    }
  });
});

describe('GET /api/v1/translate/languages/', () => {
  it("lists LibreTranslate's languages as {code, name}, cached, one search each", async () => {
    const before = await usage();
    const res = await languages();
    expect(res).toEqual({
      status: 200,
      headers: expect.anything(),
      body: {
        languages: [
          { code: 'en', name: 'English' },
          { code: 'de', name: 'German' },
          { code: 'es', name: 'Spanish' },
          { code: 'fr', name: 'French' },
        ],
      },
    });
    expect((await send('GET', '/api/v1/translate/languages')).status).toBe(200);
    expect(fake.requests.filter((r) => r.path === '/languages')).toHaveLength(1);
    expect(await usage()).toBe(before + 2);
  });

  it('falls back to the list of 15 when LibreTranslate fails or offers nothing', async () => {
    for (const mode of [
      { kind: 'status', status: 500 } as const,
      { kind: 'garbage' } as const,
      { kind: 'hang' } as const,
    ]) {
      fake.setMode(mode, '/languages');
      expect(await languages()).toMatchObject({ status: 200, body: { languages: FALLBACK } });
      t.app.searchCache.clear();
    }
    fake.setMode({ kind: 'normal' }, '/languages');
    fake.languages = [];
    expect((await languages()).body).toEqual({ languages: FALLBACK });
    t.app.searchCache.clear();
    fake.languages = [
      { code: 'eo', name: '', targets: [] },
      { code: '', name: 'Nothing', targets: [] },
    ];
    expect((await languages()).body).toEqual({ languages: [{ code: 'eo', name: 'eo' }] });
  });
});
