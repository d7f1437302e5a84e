import { alternation, escapeRegExp, unquote } from './text.js';
import type { InstantHandler } from './types.js';
import { ENCODE_VOCABULARY } from './vocabulary.js';

/*
 * `encode`: Base64 and URL (percent) encoding, both directions ("base64
 * encode hello", "url decode a%20b", "hello to base64"). Fields: `kind`
 * (url|base64), `kind_label` (URL|Base64), `action` (encode|decode),
 * `input`, `output`. "base64 <text>" alone encodes (unless the text starts
 * like a question about Base64: "base64 image", "base64 encoding"). URL encoding escapes everything but RFC 3986's
 * unreserved characters (Python's `quote(s, safe="")`); decoding leaves
 * malformed escapes as they are. A Base64 text that is not valid Base64 or
 * does not decode to UTF-8 is no answer.
 */

type Kind = 'base64' | 'url';
type Action = 'encode' | 'decode';

const KIND_LABEL: Record<Kind, string> = { base64: 'Base64', url: 'URL' };

const V = Object.values(ENCODE_VOCABULARY);
const KINDS = new Map<string, Kind>(V.flatMap((v) => Object.entries(v.kinds)));
const ACTIONS = new Map<string, Action>(V.flatMap((v) => Object.entries(v.actions)));
const group = (words: Iterable<string>) =>
  `(${[...words]
    .sort((a, b) => b.length - a.length)
    .map((w) => escapeRegExp(w).replace(/ /g, '\\s+'))
    .join('|')})`;
const kind = group(KINDS.keys());
const action = group(ACTIONS.keys());
const toWord = alternation(V.flatMap((v) => v.toWords));
const fromWord = alternation(V.flatMap((v) => v.fromWords));
const convertWord = alternation(V.flatMap((v) => v.convertWords));

const PATTERNS: { re: RegExp; kind: number; action: number | Action; payload: number }[] = [
  // "base64 encode hello", "urlencode hello", "url-decode a%20b", "base64: hello"
  { re: new RegExp(`^${kind}[\\s-]*${action}\\s*:?\\s+(.+)$`, 'isu'), kind: 1, action: 2, payload: 3 },
  // "encode base64 hello", "decode url a%20b"
  { re: new RegExp(`^${action}\\s+${kind}\\s*:?\\s+(.+)$`, 'isu'), kind: 2, action: 1, payload: 3 },
  // "encode hello to base64", "decode aGk= from base64"
  {
    re: new RegExp(`^${action}\\s+(.+?)\\s+(?:${toWord}|${fromWord})\\s+${kind}$`, 'isu'),
    kind: 3,
    action: 1,
    payload: 2,
  },
  // "hello to base64", "convert hello to base64"
  {
    re: new RegExp(`^(?:${convertWord}\\s+)?(.+?)\\s+${toWord}\\s+${kind}$`, 'isu'),
    kind: 2,
    action: 'encode',
    payload: 1,
  },
  // "aGk= from base64"
  { re: new RegExp(`^(.+?)\\s+${fromWord}\\s+${kind}$`, 'isu'), kind: 2, action: 'decode', payload: 1 },
];
// "base64 hello" (Base64 only, encoding; not "base64 encoding" or "base64 image", which are searches)
const BARE_BASE64 = new RegExp(`^${kind}\\s*:?\\s+(.+)$`, 'isu');
const NOT_TEXT = new Set(V.flatMap((v) => [...v.notText, ...Object.keys(v.actions)]));

const UNRESERVED = /[A-Za-z0-9\-._~]/;

export function urlEncode(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && UNRESERVED.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Percent-decoding: each run of valid escapes is decoded as UTF-8 (invalid bytes → U+FFFD); anything else is kept. */
export function urlDecode(s: string): string {
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
const BASE64URL = /^[A-Za-z0-9\-_]+={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function base64Encode(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

/** The UTF-8 text of a Base64 (or Base64url) string, or null. */
export function base64Decode(s: string): string | null {
  const compact = s.replace(/\s+/g, '');
  if (compact === '') return null;
  let bytes: Buffer;
  if (BASE64.test(compact)) bytes = Buffer.from(compact, 'base64');
  else if (BASE64URL.test(compact) && compact.replace(/=+$/, '').length % 4 !== 1)
    bytes = Buffer.from(compact, 'base64url');
  else return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

function convert(k: Kind, a: Action, input: string): string | null {
  if (k === 'base64') return a === 'encode' ? base64Encode(input) : base64Decode(input);
  return a === 'encode' ? urlEncode(input) : urlDecode(input);
}

export const encodeHandler: InstantHandler = {
  type: 'encode',
  async answer(ctx) {
    let k: Kind | undefined;
    let a: Action | undefined;
    let payload: string | undefined;
    for (const p of PATTERNS) {
      const m = p.re.exec(ctx.q);
      if (!m) continue;
      k = KINDS.get(m[p.kind]!.toLowerCase().replace(/\s+/g, ' '));
      a = typeof p.action === 'string' ? p.action : ACTIONS.get(m[p.action]!.toLowerCase());
      payload = m[p.payload];
      break;
    }
    if (payload === undefined) {
      const m = BARE_BASE64.exec(ctx.q);
      if (m && KINDS.get(m[1]!.toLowerCase().replace(/\s+/g, ' ')) === 'base64') {
        const rest = m[2]!.trim();
        if (/^["']/.test(rest) || !NOT_TEXT.has(rest.split(/\s+/)[0]!.toLowerCase())) {
          k = 'base64';
          a = 'encode';
          payload = rest;
        }
      }
    }
    if (!k || !a || payload === undefined) return null;
    const input = unquote(payload);
    if (input === '') return null;
    const output = convert(k, a, input);
    if (output === null) return null;
    return { kind: k, kind_label: KIND_LABEL[k], action: a, input, output };
  },
};
