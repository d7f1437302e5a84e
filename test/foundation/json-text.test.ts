import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrintableAscii, jsonString } from '../../src/json-text.js';

/*
 * The log line's strings written without JSON.stringify must be JSON.stringify's text, byte for
 * byte, whatever the string: what jsonString writes itself and what it hands over.
 */

/** Strings of every kind: plain ASCII, quotes and backslashes, control characters, non-ASCII, lone surrogates. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '',
    '"',
    '\\',
    'a"b',
    'c\\d',
    '\u007f',
    '\u001f',
    ' ',
    '~',
    'é',
    '\ud800',
    '/api/v1/instant/?q=1+%2B+1',
  ),
);

describe('JSON text for the log line', () => {
  it('writes a string as JSON.stringify does', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(jsonString(s)).toBe(JSON.stringify(s));
      }),
      { numRuns: 5000 },
    );
  });

  it('tells printable ASCII from anything else, as /^[\\x20-\\x7e]*$/ does', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(isPrintableAscii(s)).toBe(/^[\x20-\x7e]*$/.test(s));
      }),
      { numRuns: 5000 },
    );
  });
});
