import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { list, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { LIBRETRANSLATE } from './slug.js';

/*
 * LibreTranslate languages (translate): GET {LIBRETRANSLATE_URL}/languages
 * (no key, free). Response: [{code, name, targets}]; mapped to {code, name}
 * (entries without a code dropped, a missing name replaced by the code).
 * Cached for the provider's TTL (1 h). An answer that is not an array is a
 * bad response.
 *
 * Sources: LibreTranslate's API usage guide and its server
 * (LibreTranslate/LibreTranslate libretranslate/app.py, /languages).
 */

export interface Language {
  code: string;
  name: string;
}

const item = z.object({ code: text, name: text });

export function parseLanguages(json: unknown): Language[] {
  if (!Array.isArray(json)) throw new Error('expected an array of languages');
  const out: Language[] = [];
  for (const l of list(item).parse(json)) {
    const code = l.code.trim();
    if (code) out.push({ code, name: l.name || code });
  }
  return out;
}

export function libreTranslateLanguagesCall(config: Pick<Config, 'LIBRETRANSLATE_URL'>): ProviderCall<Language[]> {
  return {
    provider: LIBRETRANSLATE,
    request: { method: 'GET', url: `${config.LIBRETRANSLATE_URL}/languages` },
    parse: parseLanguages,
  };
}
