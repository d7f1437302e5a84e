import type { Config } from '../config/index.js';
import { LIBRETRANSLATE } from '../providers/libretranslate/index.js';
import { type Language, libreTranslateLanguagesCall } from '../providers/libretranslate/languages.js';
import { libreTranslateTask } from '../providers/libretranslate/translate.js';
import type { ProviderDirectory, Upstream } from '../providers/types.js';
import { UpstreamError } from '../providers/types.js';
import type { SearchOutcome } from './outcome.js';
import type { TranslateParams } from './queries.js';

/*
 * GET|POST /api/v1/translate/ and GET /api/v1/translate/languages/ (spec 2.7,
 * 4.2 rule 2, 7; reference section 5):
 *
 * - `q` (or `text`) and `target` required, `source` default `auto`; the text
 *   at most 5,000 characters (400 naming the field it came from, and no
 *   upstream call). `target` and `source` must be language codes (`source` may
 *   be `auto`): anything else is the caller's 400, never sent.
 * - LibreTranslate not configured, or failing in any way: 503 with the spec's
 *   exact detail. `detected_lang` only when the source was `auto`.
 * - Languages: LibreTranslate's list (cached 1 h by the runner), or the
 *   original's fallback list of 15 when it is unset, failing or empty.
 */

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
  if (!deps.providers.isConfigured(LIBRETRANSLATE)) return unavailable();
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
  if (deps.providers.isConfigured(LIBRETRANSLATE)) {
    try {
      const languages = await deps.upstream.call(libreTranslateLanguagesCall(deps.config));
      if (languages.length > 0) return { languages };
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
    }
  }
  return { languages: FALLBACK_LANGUAGES.map((l) => ({ ...l })) };
}
