import { z } from 'zod';
import type { Config } from '../config/index.js';
import { type Language, libreTranslateLanguagesCall } from '../providers/libretranslate/languages.js';
import { libreTranslateTask } from '../providers/libretranslate/translate.js';
import type { ProviderDirectory, Upstream } from '../providers/types.js';
import { UpstreamError } from '../providers/types.js';
import type { SearchOutcome } from './outcome.js';
import type { FieldErrors } from './params.js';

/*
 * GET|POST /api/v1/translate/ and GET /api/v1/translate/languages/ (spec 2.7,
 * 4.2 rule 2, 7; reference section 5):
 *
 * - `q` (or `text`) and `target` required, `source` default `auto`; the text
 *   at most 5,000 characters (400 naming the field it came from, and no
 *   upstream call). Codes are passed on as given (stripped), not validated.
 * - LibreTranslate not configured, or failing in any way: 503 with the spec's
 *   exact detail. `detected_lang` only when the source was `auto`.
 * - Languages: LibreTranslate's list (cached 1 h by the runner), or the
 *   original's fallback list of 15 when it is unset, failing or empty.
 */

export const TEXT_MAX_LENGTH = 5000;

export const TRANSLATE_MESSAGES = {
  text: 'This parameter is required (the text to translate).',
  target: 'This parameter is required (target language code).',
  tooLong: `Ensure this value has at most ${TEXT_MAX_LENGTH} characters.`,
  notString: 'Must be a string.',
  body: 'The request body must be a JSON object or form-encoded fields.',
} as const;

export const TRANSLATION_UNAVAILABLE = 'Translation is unavailable or not configured on this deployment.';

export const FALLBACK_LANGUAGES: readonly Language[] = [
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

const FIELDS = ['q', 'text', 'target', 'source'] as const;

const stripped = z
  .string()
  .optional()
  .transform((raw) => (raw === undefined ? '' : raw.trim()));

function tooLong(s: string): boolean {
  return s.length > TEXT_MAX_LENGTH && [...s].length > TEXT_MAX_LENGTH;
}

/** Fields of GET (query string) and POST (form or JSON body) /api/v1/translate/. */
export const translateSchema = z
  .object({
    q: stripped.meta({ description: `The text to translate (or \`text\`), at most ${TEXT_MAX_LENGTH} characters.` }),
    text: stripped.meta({ description: 'The text to translate, when `q` is not given.' }),
    target: stripped.meta({ description: 'Target language code (required).' }),
    source: stripped.meta({ description: 'Source language code, or `auto` (the default) to detect it.' }),
  })
  .superRefine((f, ctx) => {
    if (f.q === '' && f.text === '') ctx.addIssue({ code: 'custom', path: ['q'], message: TRANSLATE_MESSAGES.text });
    else if (f.q !== '' ? tooLong(f.q) : tooLong(f.text)) {
      ctx.addIssue({ code: 'custom', path: [f.q !== '' ? 'q' : 'text'], message: TRANSLATE_MESSAGES.tooLong });
    }
    if (f.target === '') ctx.addIssue({ code: 'custom', path: ['target'], message: TRANSLATE_MESSAGES.target });
  });

export type TranslateParams = z.output<typeof translateSchema>;

/**
 * The shape of a POST body before the schema: a JSON object or form fields
 * whose values are strings (a repeated form field is a list of strings; null
 * counts as absent). Anything else is a 400 naming what is wrong.
 */
export function translateBodyErrors(raw: unknown): FieldErrors | null {
  if (raw === undefined) return null;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { detail: TRANSLATE_MESSAGES.body };
  const errors: FieldErrors = {};
  for (const field of FIELDS) {
    if (!Object.hasOwn(raw, field)) continue;
    const v = (raw as Record<string, unknown>)[field];
    const ok = v === null || typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
    if (!ok) errors[field] = TRANSLATE_MESSAGES.notString;
  }
  return Object.keys(errors).length > 0 ? errors : null;
}

/** `null` values of a JSON body are absent (the schema takes strings only). */
export function translateInput(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const field of FIELDS) {
    const v = (raw as Record<string, unknown>)[field];
    if (Object.hasOwn(raw, field) && v !== null) out[field] = v;
  }
  return out;
}

export interface TranslateResponse {
  source: string;
  target: string;
  translated_text: string;
  detected_lang: string;
}

export interface LanguagesResponse {
  languages: Language[];
}

export interface TranslateDeps {
  config: Config;
  upstream: Upstream;
  providers: ProviderDirectory;
}

const unavailable = (): SearchOutcome<never> => ({ status: 503, body: { detail: TRANSLATION_UNAVAILABLE } });

export async function translate(
  deps: TranslateDeps,
  params: TranslateParams,
): Promise<SearchOutcome<TranslateResponse>> {
  const text = params.q || params.text;
  const source = params.source || 'auto';
  const target = params.target;
  if (!deps.providers.isConfigured('translate')) return unavailable();
  try {
    const result = await deps.upstream.call(libreTranslateTask({ text, source, target }, deps.config));
    return {
      status: 200,
      body: {
        source,
        target,
        translated_text: result.translatedText,
        detected_lang: source === 'auto' ? result.detected : '',
      },
    };
  } catch (err) {
    if (err instanceof UpstreamError) return unavailable();
    throw err;
  }
}

export async function translationLanguages(deps: TranslateDeps): Promise<LanguagesResponse> {
  if (deps.providers.isConfigured('translate')) {
    try {
      const languages = await deps.upstream.call(libreTranslateLanguagesCall(deps.config));
      if (languages.length > 0) return { languages };
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
    }
  }
  return { languages: FALLBACK_LANGUAGES.map((l) => ({ ...l })) };
}
