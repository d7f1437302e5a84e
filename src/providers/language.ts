/*
 * The parts of a `lang` tag (BCP 47 as callers write it: `pt-BR`, `zh_Hant_TW`,
 * `en`), for adapters that map it to an upstream's own list of values: most
 * lists hold plain languages, some language-region or language-script pairs.
 */

/** A language tag's parts in lower case: `zh-Hant-TW` -> zh, hant, tw; `pt_BR` -> pt, '', br. */
export function langParts(lang: string): { language: string; script: string; region: string } {
  const [language = '', ...rest] = lang.toLowerCase().split(/[-_]/);
  let script = '';
  let region = '';
  for (const part of rest) {
    if (!script && /^[a-z]{4}$/.test(part)) script = part;
    else if (!region && /^(?:[a-z]{2}|\d{3})$/.test(part)) region = part;
  }
  return { language, script, region };
}

/** The language of a tag (`pt-br` -> `pt`), or '' when it does not start with a two- or three-letter code. */
export function primaryLanguage(lang: string): string {
  const { language } = langParts(lang);
  return /^[a-z]{2,3}$/.test(language) ? language : '';
}
