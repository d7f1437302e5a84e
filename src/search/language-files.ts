import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../runtime/project-root.js';

/*
 * Word lists as data: vocabulary/<area>/<language>.json, one file per
 * language (vocabulary/instant/en.json, vocabulary/cards/fr.json). Each
 * area's files are read and validated once, when its module loads, so a
 * server does not start on a broken file; adding a language is adding its
 * file. Detection merges every language's entries, as the query's language
 * is not known in advance.
 */

export const VOCABULARY_DIR = path.join(PROJECT_ROOT, 'vocabulary');

/** One area's entries, keyed by language tag. */
export type LanguageTable<T> = Readonly<Record<string, T>>;

/** A word list: phrases matched whole, after the handler's own folding. */
export const wordList = z.array(z.string());

/** A BCP 47 tag in its canonical form, its language being an ISO 639 code ("en", "pt-BR"; not "english"). */
function isLanguageTag(name: string): boolean {
  try {
    return /^[a-z]{2,3}(?:-|$)/.test(name) && Intl.getCanonicalLocales(name)[0] === name;
  } catch {
    return false;
  }
}

/** Every language file of `area`, each checked against `schema`; throws naming the file and what is wrong. */
export function loadLanguageFiles<S extends z.ZodType>(
  area: string,
  schema: S,
  root: string = VOCABULARY_DIR,
): LanguageTable<z.infer<S>> {
  const folder = path.join(root, area);
  const files = readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new Error(`no vocabulary file in ${folder}`);
  const byLanguage: Record<string, z.infer<S>> = {};
  for (const name of files) {
    const file = path.join(folder, name);
    const language = name.slice(0, -'.json'.length);
    if (!isLanguageTag(language)) {
      throw new Error(`${file}: a vocabulary file is named for its language tag (en.json, pt-BR.json)`);
    }
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`${file} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new Error(`${file} is not a valid ${area} vocabulary:\n${z.prettifyError(parsed.error)}`);
    byLanguage[language] = parsed.data;
  }
  return byLanguage;
}

/** One entry of every language: `{ en: vocabulary.en[key], fr: … }`. */
export function entryOf<T extends object, K extends keyof T>(table: LanguageTable<T>, key: K): LanguageTable<T[K]> {
  return Object.fromEntries(Object.entries(table).map(([language, entries]) => [language, entries[key]]));
}
