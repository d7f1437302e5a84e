import { hash } from 'node:crypto';
import { alternation, escapeRegExp, unquote } from './text.js';
import type { InstantHandler } from './types.js';
import { HASH_VOCABULARY } from './vocabulary.js';

/*
 * `hash`: md5, sha1, sha256 and sha512 of a text ("sha256 hello", "md5 hash
 * of hello", "hash of hello"). Fields: `text`, `hashes` {md5, sha1, sha256,
 * sha512}, `highlight` (the algorithm asked for, or "" for a generic "hash").
 */

export const HASH_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;

export function hashesOf(text: string): Record<(typeof HASH_ALGORITHMS)[number], string> {
  const out = {} as Record<(typeof HASH_ALGORITHMS)[number], string>;
  for (const algo of HASH_ALGORITHMS) out[algo] = hash(algo, text, 'hex');
  return out;
}

const V = Object.values(HASH_VOCABULARY);
const ALGOS = new Map<string, string>(V.flatMap((v) => Object.entries(v.algorithms)));
const algo = `(${[...ALGOS.keys()]
  .sort((a, b) => b.length - a.length)
  .map(escapeRegExp)
  .join('|')})`;
const connector = alternation(V.flatMap((v) => v.connectors));
const generic = alternation(V.flatMap((v) => v.generic));
const FILLER = new Set(V.flatMap((v) => [...v.connectors, ...v.generic]));
const NOT_TEXT = new Set(V.flatMap((v) => v.notText));

// "sha256 hello", "sha256 hash of hello", "md5: hello"
const NAMED = new RegExp(`^${algo}(?:\\s*:|\\s+${connector})?\\s+(.+)$`, 'isu');
// "hash of hello", "hash for hello"
const GENERIC_OF = new RegExp(`^${generic}\\s+(?:of|for)\\s+(.+)$`, 'isu');
// hash "hello"
const GENERIC_QUOTED = new RegExp(`^${generic}\\s+(".*"|'.*')$`, 'isu');

export const hashHandler: InstantHandler = {
  type: 'hash',
  async answer(ctx) {
    let highlight = '';
    let raw: string | undefined;
    const named = NAMED.exec(ctx.q);
    if (named) {
      highlight = ALGOS.get(named[1]!.toLowerCase()) ?? '';
      raw = named[2];
    } else {
      raw = (GENERIC_OF.exec(ctx.q) ?? GENERIC_QUOTED.exec(ctx.q))?.[1];
    }
    if (raw === undefined) return null;
    const rest = raw.trim().toLowerCase();
    if (FILLER.has(rest)) return null;
    // "md5 vs sha256", "sha256 decrypt", "md5 sha1": a question about the algorithms (quoted text is always hashed)
    if (!/^["']/.test(rest)) {
      const first = rest.split(/\s+/)[0]!;
      if (NOT_TEXT.has(first) || ALGOS.has(first)) return null;
    }
    const text = unquote(raw);
    if (text === '') return null;
    return { text, hashes: hashesOf(text), highlight };
  },
};
