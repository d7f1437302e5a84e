import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { body, nested, text } from '../tolerant.js';
import type { ProviderCall, ProviderFlow } from '../types.js';

/*
 * LibreTranslate (translate): POST {LIBRETRANSLATE_URL}/translate with the
 * JSON body {q, source, target, format: "text", api_key?} (the key only when
 * LIBRETRANSLATE_API_KEY is set; it is never in a URL, a cache key or a log).
 * Response: {translatedText, detectedLanguage?: {language, confidence}}
 * (detectedLanguage only when source is "auto"). An answer without a
 * translated text is a bad response (so the endpoint answers 503, never an
 * empty translation).
 */

export interface TranslateQuery {
  text: string;
  /** A language code, or "auto". */
  source: string;
  target: string;
}

export interface Translation {
  translatedText: string;
  /** The language LibreTranslate detected ("" when it reported none). */
  detected: string;
}

export type LibreTranslateConfig = Pick<Config, 'LIBRETRANSLATE_URL' | 'LIBRETRANSLATE_API_KEY'>;

const detectedLanguage = z
  .unknown()
  .optional()
  .transform((v) => nested({ language: text }).parse(Array.isArray(v) ? v[0] : v));

const schema = body({
  translatedText: z.unknown().optional(),
  detectedLanguage,
});

export function parseTranslation(json: unknown): Translation {
  const data = schema.parse(json);
  let translated = data.translatedText;
  if (Array.isArray(translated)) translated = translated[0];
  if (typeof translated !== 'string') throw new Error('no translatedText in the answer');
  return { translatedText: translated, detected: data.detectedLanguage.language };
}

/** The JSON body of POST /translate (key order as documented). */
export function translateBody(query: TranslateQuery, apiKey: string): string {
  const payload: Record<string, string> = {
    q: query.text,
    source: query.source,
    target: query.target,
    format: 'text',
  };
  if (apiKey) payload.api_key = apiKey;
  return JSON.stringify(payload);
}

export function libreTranslateCall(query: TranslateQuery, config: LibreTranslateConfig): ProviderCall<Translation> {
  return {
    provider: 'translate',
    request: {
      method: 'POST',
      url: `${config.LIBRETRANSLATE_URL}/translate`,
      headers: { 'Content-Type': 'application/json' },
      body: translateBody(query, config.LIBRETRANSLATE_API_KEY),
    },
    parse: parseTranslation,
  };
}

/**
 * The translation as callers run it: cached for the provider's TTL (1 h)
 * under a key made of the base URL, the languages and the text only, so no
 * credential can reach the cache key whatever its length or characters.
 */
export function libreTranslateTask(query: TranslateQuery, config: LibreTranslateConfig): ProviderFlow<Translation> {
  const call = libreTranslateCall(query, config);
  return {
    provider: 'translate',
    key: JSON.stringify(['translate', config.LIBRETRANSLATE_URL, query.source, query.target, query.text]),
    run: (steps) => steps.call(call),
  };
}
