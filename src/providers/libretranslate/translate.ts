import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { body, nested, text } from '../tolerant.js';
import type { ProviderCall, ProviderFlow, Refusal } from '../types.js';
import { LIBRETRANSLATE } from './slug.js';

/*
 * LibreTranslate (translate): POST {LIBRETRANSLATE_URL}/translate with the
 * JSON body {q, source, target, format: "text", api_key?} (the key only when
 * LIBRETRANSLATE_API_KEY is set; it is never in a URL, a cache key or a log).
 * Response: {translatedText, detectedLanguage?: {language, confidence}}
 * (detectedLanguage only when source is "auto"). An answer without a
 * translated text is a bad response (so the endpoint answers 503, never an
 * empty translation). LibreTranslate's API usage guide and its server
 * (LibreTranslate/LibreTranslate libretranslate/app.py).
 *
 * Errors are {"error": "<message>"}. A 400 "<code> is not supported" (a
 * source or target language the server lacks) or "… exceeds text limit" is a
 * refusal of the caller's own value: the endpoint still answers the spec's
 * 503, and it is never recorded as the backend failing. A 400 asking for an
 * API key and a 403 "Invalid API key" are failures of the configuration.
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

/** The caller's value a LibreTranslate 400 refused (a language it does not support, a text over its limit), or null. */
export function libreTranslateRefusal(status: number, body: string, query: TranslateQuery): Refusal | null {
  if (status !== 400) return null;
  const error = /"error"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(body)?.[1] ?? '';
  const unsupported = /^(.{1,40}) is not supported$/.exec(error)?.[1];
  if (unsupported !== undefined) {
    const parameter = unsupported === query.target ? 'target' : unsupported === query.source ? 'source' : '';
    if (!parameter) return null;
    return {
      cause: 'caller',
      parameter,
      upstreamParameter: parameter,
      value: '',
      message: 'The translation backend does not support this language.',
    };
  }
  if (/exceeds text limit/.test(error)) {
    return {
      cause: 'caller',
      parameter: 'q',
      upstreamParameter: 'q',
      value: '',
      message: 'The text is longer than the translation backend accepts.',
    };
  }
  return null;
}

export function libreTranslateCall(query: TranslateQuery, config: LibreTranslateConfig): ProviderCall<Translation> {
  return {
    provider: LIBRETRANSLATE,
    request: {
      method: 'POST',
      url: `${config.LIBRETRANSLATE_URL}/translate`,
      headers: { 'Content-Type': 'application/json' },
      body: translateBody(query, config.LIBRETRANSLATE_API_KEY),
    },
    parse: parseTranslation,
    refusal: (status, text) => libreTranslateRefusal(status, text, query),
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
    provider: LIBRETRANSLATE,
    key: JSON.stringify([LIBRETRANSLATE, config.LIBRETRANSLATE_URL, query.source, query.target, query.text]),
    run: (steps) => steps.call(call),
  };
}
