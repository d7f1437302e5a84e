import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { entryOf, loadLanguageFiles, wordList } from '../../src/search/language-files.js';
import { parseColor } from '../../src/search/instant/color.js';
import { parseCurrencyQuery } from '../../src/search/instant/currency.js';
import { describeStatus } from '../../src/search/instant/http-status.js';
import { currencyNames, regionNames } from '../../src/search/instant/intl-names.js';
import { normalise } from '../../src/search/instant/text.js';
import { zoneOf } from '../../src/search/instant/worldclock.js';

/*
 * The vocabularies as data: language files read and validated once, a
 * second language added as a file, and the names taken from the platform
 * (Intl, http.STATUS_CODES, color-name) instead of hand-kept lists.
 */

const schema = z.strictObject({
  greet: z.strictObject({ phrases: wordList }),
  count: z.record(z.string(), z.number()),
});

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A vocabulary root with an area `test` holding these files (name → text). */
function vocabularyRoot(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'sift-vocabulary-'));
  roots.push(root);
  mkdirSync(path.join(root, 'test'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(root, 'test', name), text);
  return root;
}

const en = JSON.stringify({ greet: { phrases: ['hello', 'hi'] }, count: { one: 1 } });
const fr = JSON.stringify({ greet: { phrases: ['bonjour'] }, count: { un: 1 } });

describe('language files', () => {
  it('give one entry per language file, a second language being only a second file', () => {
    const table = loadLanguageFiles('test', schema, vocabularyRoot({ 'en.json': en, 'fr.json': fr, 'README.md': '#' }));
    expect(Object.keys(table)).toEqual(['en', 'fr']);
    expect(entryOf(table, 'greet')).toEqual({ en: { phrases: ['hello', 'hi'] }, fr: { phrases: ['bonjour'] } });
    expect(entryOf(table, 'count')).toEqual({ en: { one: 1 }, fr: { un: 1 } });
  });

  it('refuse a file that breaks the schema, naming the file and the field', () => {
    const broken = JSON.stringify({ greet: { phrases: ['hello', 7] }, count: {} });
    const root = vocabularyRoot({ 'en.json': en, 'de.json': broken });
    expect(() => loadLanguageFiles('test', schema, root)).toThrow(
      /de\.json is not a valid test vocabulary[\s\S]*greet\.phrases/,
    );
  });

  it('refuse a misspelt list name rather than ignore it', () => {
    const misspelt = JSON.stringify({ greet: { phrase: ['hello'] }, count: {} });
    expect(() => loadLanguageFiles('test', schema, vocabularyRoot({ 'en.json': misspelt }))).toThrow(/en\.json/);
  });

  it('refuse a file that is not JSON, or not named for a language tag, or an area without files', () => {
    expect(() => loadLanguageFiles('test', schema, vocabularyRoot({ 'en.json': '{"greet": ' }))).toThrow(
      /en\.json is not JSON/,
    );
    expect(() => loadLanguageFiles('test', schema, vocabularyRoot({ 'english.json': en }))).toThrow(
      /english\.json: a vocabulary file is named for its language tag/,
    );
    expect(() => loadLanguageFiles('test', schema, vocabularyRoot({ 'EN.json': en }))).toThrow(/EN\.json/);
    expect(loadLanguageFiles('test', schema, vocabularyRoot({ 'pt-BR.json': en }))).toHaveProperty('pt-BR');
    expect(() => loadLanguageFiles('test', schema, vocabularyRoot({}))).toThrow(/no vocabulary file/);
  });
});

describe('names from the platform', () => {
  it('recognise the currency names Intl gives, singular and plural, beside the vocabulary’s own', () => {
    expect(parseCurrencyQuery(normalise('100 israeli new shekels to us dollars'))).toEqual({
      amount: 100,
      from: 'ILS',
      to: 'USD',
    });
    expect(parseCurrencyQuery(normalise('5 malaysian ringgit in euros'))).toEqual({
      amount: 5,
      from: 'MYR',
      to: 'EUR',
    });
    // The vocabulary's colloquial forms, which Intl lacks.
    expect(parseCurrencyQuery(normalise('20 quid to bucks'))).toEqual({ amount: 20, from: 'GBP', to: 'USD' });
  });

  it('name currencies and countries in a second language with no list of its own', () => {
    const currencies = currencyNames(['fr'], ['USD', 'EUR']);
    expect(currencies.get('dollar des états-unis')).toBe('USD');
    expect(currencies.get('euros')).toBe('EUR');
    const regions = regionNames(['de', 'fr'], ['JP', 'DE']);
    expect(regions.get('japon')).toBe('JP');
    expect(regions.get('deutschland')).toBe('DE');
  });

  it('tell the time of a country named as Intl names it, and of one named otherwise by the vocabulary', () => {
    expect(zoneOf('japan', false)).toBe('Asia/Tokyo');
    expect(zoneOf('united arab emirates', false)).toBe('Asia/Dubai');
    expect(zoneOf('usa', false)).toBe('America/New_York');
    expect(zoneOf('turkey', false)).toBe('Europe/Istanbul');
  });

  it('name HTTP statuses as http.STATUS_CODES does, but by RFC 9110’s and RFC 2324’s names where Node differs', () => {
    expect(describeStatus(404)).toMatchObject({ name: 'Not Found', category: 'client_error', is_error: true });
    expect(describeStatus(308)).toMatchObject({ name: 'Permanent Redirect', category: 'redirection' });
    expect(describeStatus(413)).toMatchObject({ name: 'Content Too Large' });
    expect(describeStatus(422)).toMatchObject({ name: 'Unprocessable Content' });
    expect(describeStatus(418)).toMatchObject({ name: "I'm a teapot" });
    // In Node's table but not registered.
    expect(describeStatus(509)).toBeNull();
  });

  it('know the CSS colour names of color-name', () => {
    expect(parseColor('rebeccapurple', true)?.rgb).toEqual({ r: 102, g: 51, b: 153 });
    expect(parseColor('Light Goldenrod Yellow', true)?.rgb).toEqual({ r: 250, g: 250, b: 210 });
    expect(parseColor('constructor', true)).toBeNull();
  });
});
