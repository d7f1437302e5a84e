import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { libreTranslateLanguagesCall, parseLanguages } from '../../src/providers/libretranslate/languages.js';
import {
  libreTranslateCall,
  libreTranslateTask,
  parseTranslation,
} from '../../src/providers/libretranslate/translate.js';
import { translateBodyErrors, translateSchema } from '../../src/search/queries.js';

const config = parseConfig({ LIBRETRANSLATE_URL: 'https://lt.example/', LIBRETRANSLATE_API_KEY: 'k3y-secret' });

describe('LibreTranslate adapters', () => {
  it('POSTs JSON {q, source, target, format, api_key} to /translate', () => {
    const call = libreTranslateCall({ text: 'Hi "you"', source: 'auto', target: 'de' }, config);
    expect(call.provider).toBe('translate');
    expect(call.request).toEqual({
      method: 'POST',
      url: 'https://lt.example/translate',
      headers: { 'Content-Type': 'application/json' },
      body: '{"q":"Hi \\"you\\"","source":"auto","target":"de","format":"text","api_key":"k3y-secret"}',
    });
    const keyless = libreTranslateCall(
      { text: 'x', source: 'en', target: 'fr' },
      parseConfig({ LIBRETRANSLATE_URL: 'https://lt.example' }),
    );
    expect(JSON.parse(keyless.request.body!)).toEqual({ q: 'x', source: 'en', target: 'fr', format: 'text' });
  });

  it('keeps the key out of the cache key', () => {
    const task = libreTranslateTask({ text: 'x', source: 'auto', target: 'de' }, config);
    expect(task.key).not.toContain('k3y-secret');
    expect(task.key).toContain('https://lt.example');
  });

  it('parses the three documented answer shapes, and refuses one without a translation', () => {
    expect(parseTranslation({ translatedText: '¡Hola!' })).toEqual({ translatedText: '¡Hola!', detected: '' });
    expect(
      parseTranslation({ translatedText: 'Hello!', detectedLanguage: { confidence: 90, language: 'fr' } }),
    ).toEqual({ translatedText: 'Hello!', detected: 'fr' });
    expect(parseTranslation({ translatedText: 'Hola', alternatives: ['¡Hola!'] }).translatedText).toBe('Hola');
    expect(parseTranslation({ translatedText: ['a', 'b'], detectedLanguage: [{ language: 'en' }] })).toEqual({
      translatedText: 'a',
      detected: 'en',
    });
    expect(parseTranslation({ translatedText: '', detectedLanguage: 'xx' })).toEqual({
      translatedText: '',
      detected: '',
    });
    expect(() => parseTranslation({ error: 'x' })).toThrow();
    expect(() => parseTranslation({ translatedText: 5 })).toThrow();
    expect(() => parseTranslation([])).toThrow();
  });

  it('maps /languages to {code, name}', () => {
    expect(libreTranslateLanguagesCall(config).request).toEqual({ method: 'GET', url: 'https://lt.example/languages' });
    expect(
      parseLanguages([{ code: 'en', name: 'English', targets: ['de'] }, { name: 'no code' }, 'junk', { code: 'eo' }]),
    ).toEqual([
      { code: 'en', name: 'English' },
      { code: 'eo', name: 'eo' },
    ]);
    expect(() => parseLanguages({ error: 'x' })).toThrow();
  });
});

describe('translate parameters', () => {
  it('strips, defaults source to auto later, and names the field that is too long', () => {
    expect(translateSchema.parse({ q: ' a ', target: ' de ', source: ' ' })).toEqual({
      q: 'a',
      text: '',
      target: 'de',
      source: '',
    });
    const r = translateSchema.safeParse({ text: 'x'.repeat(5001), target: 'de' });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path[0], i.message])).toEqual([
      ['text', 'Ensure this value has at most 5000 characters.'],
    ]);
  });

  it('checks the shape of POST bodies', () => {
    expect(translateBodyErrors(undefined)).toBeNull();
    expect(translateBodyErrors({ q: 'x', target: ['a', 'b'], source: null, other: 5 })).toBeNull();
    expect(translateBodyErrors('q=x')).toEqual({
      detail: 'The request body must be a JSON object or form-encoded fields.',
    });
    expect(translateBodyErrors({ q: 1, text: {}, target: false, source: [null] })).toEqual({
      q: 'Must be a string.',
      text: 'Must be a string.',
      target: 'Must be a string.',
      source: 'Must be a string.',
    });
  });
});
