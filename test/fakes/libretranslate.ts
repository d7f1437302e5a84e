import { type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake LibreTranslate: GET /languages, POST /translate and POST /detect
 * (JSON or form bodies), errors as {"error": "..."} like the real server
 * (400 "<code> is not supported" for a source or target it lacks).
 */

export const LANGUAGES = [
  { code: 'en', name: 'English', targets: ['de', 'es', 'fr'] },
  { code: 'de', name: 'German', targets: ['en', 'es', 'fr'] },
  { code: 'es', name: 'Spanish', targets: ['de', 'en', 'fr'] },
  { code: 'fr', name: 'French', targets: ['de', 'en', 'es'] },
];

const DICTIONARY: Record<string, Record<string, string>> = {
  'hello world': { de: 'Hallo Welt', es: 'Hola mundo', fr: 'Bonjour le monde' },
  bonjour: { en: 'Hello', de: 'Hallo', es: 'Hola' },
};

export interface LibreTranslateFake extends FakeServer {
  /** When set, /translate and /detect require this api_key (like a keyed server). */
  requiredKey: string;
  /** Served by /languages (an empty list makes the probe fail). */
  languages: typeof LANGUAGES;
  /** Report detectedLanguage even when a source language was given (default false: only for "auto"). */
  alwaysDetect: boolean;
}

function fields(body: string, contentType: string | string[] | undefined): Record<string, unknown> {
  if (String(contentType ?? '').includes('application/json')) {
    try {
      return JSON.parse(body) as Record<string, unknown>;
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(body));
}

export async function startLibreTranslateFake(options: FakeServerOptions = {}): Promise<LibreTranslateFake> {
  const state = { requiredKey: '', languages: LANGUAGES, alwaysDetect: false };
  const server = await startFakeServer(
    {
      'GET /languages': () => ({ body: state.languages }),
      'POST /translate': (req) => {
        const f = fields(req.body, req.headers['content-type']);
        if (state.requiredKey && f.api_key !== state.requiredKey) {
          return { status: 403, body: { error: 'Invalid API key' } };
        }
        const q = typeof f.q === 'string' ? f.q : '';
        if (!q) return { status: 400, body: { error: 'Invalid request: missing q parameter' } };
        // Like libretranslate/app.py: a source (unless "auto") or target the server lacks is "<code> is not supported".
        const source = String(f.source ?? 'auto');
        if (source !== 'auto' && !state.languages.some((l) => l.code === source)) {
          return { status: 400, body: { error: `${source} is not supported` } };
        }
        const target = String(f.target ?? '');
        if (!state.languages.some((l) => l.code === target)) {
          return { status: 400, body: { error: `${target} is not supported` } };
        }
        const translatedText = DICTIONARY[q.toLowerCase()]?.[target] ?? `[${target}] ${q}`;
        return {
          body:
            source === 'auto' || state.alwaysDetect
              ? {
                  translatedText,
                  detectedLanguage: { confidence: 90.0, language: q.toLowerCase() === 'bonjour' ? 'fr' : 'en' },
                }
              : { translatedText },
        };
      },
      'POST /detect': (req) => {
        const f = fields(req.body, req.headers['content-type']);
        const q = typeof f.q === 'string' ? f.q : '';
        return { body: [{ confidence: 90.0, language: q.toLowerCase() === 'bonjour' ? 'fr' : 'en' }] };
      },
    },
    options,
  );
  Object.defineProperty(server, 'requiredKey', {
    get: () => state.requiredKey,
    set: (v: LibreTranslateFake['requiredKey']) => {
      state.requiredKey = v;
    },
    enumerable: true,
  });
  Object.defineProperty(server, 'languages', {
    get: () => state.languages,
    set: (v: LibreTranslateFake['languages']) => {
      state.languages = v;
    },
    enumerable: true,
  });
  Object.defineProperty(server, 'alwaysDetect', {
    get: () => state.alwaysDetect,
    set: (v: boolean) => {
      state.alwaysDetect = v;
    },
    enumerable: true,
  });
  return server as LibreTranslateFake;
}
