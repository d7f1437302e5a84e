/*
 * Names the platform knows in every language, lowercased for matching
 * queries: currencies ("us dollar", "us dollars", "dollar américain") and
 * countries ("japan", "japon"). Intl's data (ICU's CLDR) stands in for
 * hand-kept lists; the vocabulary files add only what it lacks (colloquial
 * and unqualified forms: "bucks", "yen", "usa").
 */

/** Amounts whose plural forms cover every plural category of the languages Sift has (one, two, few, many, other). */
const PLURAL_SAMPLES = [0, 1, 2, 3, 5, 1.5, 21, 100];

/** Each written name of each currency in each language (singular and plural) → its code. */
export function currencyNames(languages: readonly string[], codes: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const language of languages) {
    const display = new Intl.DisplayNames(language, { type: 'currency', fallback: 'none' });
    for (const code of codes) {
      const name = display.of(code);
      if (name) names.set(name.toLowerCase(), code);
      const format = new Intl.NumberFormat(language, { style: 'currency', currency: code, currencyDisplay: 'name' });
      for (const amount of PLURAL_SAMPLES) {
        const part = format.formatToParts(amount).find((p) => p.type === 'currency');
        if (part) names.set(part.value.toLowerCase(), code);
      }
    }
  }
  return names;
}

/** Each language's name of each region (ISO 3166 code: JP → "japan", "japon") → its code. */
export function regionNames(languages: readonly string[], regions: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const language of languages) {
    const display = new Intl.DisplayNames(language, { type: 'region', fallback: 'none' });
    for (const region of regions) {
      const name = display.of(region);
      if (name) names.set(name.toLowerCase(), region);
    }
  }
  return names;
}
