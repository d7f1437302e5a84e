import net from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import pino from 'pino';
import { cookieHeader, rememberSetCookies } from '../helpers/cookies.js';

/*
 * Support for the fuzz tests (fuzz.test.ts): the routes of the running app,
 * a cookie jar over app.inject, a log that keeps what the app wrote, raw
 * requests over a socket, and the fast-check arbitraries of hostile input.
 */

export interface AppRoute {
  /** The path as registered (`/api/v1/web/`, `/status/health/:provider`, `/status/health/*`). */
  path: string;
  methods: string[];
}

/**
 * Every route of the app, from `printRoutes()`: one line per tree node, each
 * indented four columns per level under its parent, with the methods of the
 * path ending there in parentheses.
 */
export function appRoutes(app: FastifyInstance): AppRoute[] {
  const stack: string[] = [];
  const routes: AppRoute[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/u.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    if (m[3]) routes.push({ path: stack.join(''), methods: m[3].split(', ') });
  }
  return routes;
}

/** A route path with its parameters filled: `:name` and `*` by `fill`. */
export function concretePath(path: string, fill: string): string {
  return path.replace(/:[A-Za-z_]+/g, fill).replace(/\*$/, fill);
}

export interface LogEntry {
  level: number;
  msg?: string;
  err?: { type?: string; message?: string; stack?: string };
  [key: string]: unknown;
}

/** A pino logger (level warn) whose lines are kept in `entries`. */
export function capturingLogger(): { logger: pino.Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        try {
          entries.push(JSON.parse(line) as LogEntry);
        } catch {
          entries.push({ level: 60, msg: `unparsable log line: ${line.slice(0, 200)}` });
        }
      }
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, stream), entries };
}

/** app.inject with a cookie jar (a browser that never follows redirects). */
export class InjectSession {
  readonly cookies = new Map<string, string>();
  constructor(private readonly app: FastifyInstance) {}

  async request(options: InjectOptions): Promise<LightMyRequestResponse> {
    const headers = { ...(options.headers ?? {}) } as Record<string, string | string[]>;
    if (this.cookies.size > 0 && headers.cookie === undefined) {
      headers.cookie = cookieHeader(this.cookies);
    }
    const res = await this.app.inject({ ...options, headers });
    const set = res.headers['set-cookie'];
    rememberSetCookies(this.cookies, Array.isArray(set) ? set : set ? [set] : []);
    return res;
  }

  /** The CSRF token of the first form of a page. */
  static csrfToken(html: string): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!match) throw new Error('no CSRF token on the page');
    return match[1]!;
  }
}

export interface RawAnswer {
  /** Everything the server sent before closing (or before `waitMs` of silence after a complete answer). */
  text: string;
  /** The status of the first answer, or 0 when the server sent nothing. */
  status: number;
  /** The server closed the connection. */
  closed: boolean;
  ms: number;
}

/**
 * Sends `bytes` to 127.0.0.1:`port` as they are, and collects the answer
 * until the server closes the connection or `limitMs` pass. With
 * `endWrite`, the client half-closes after sending.
 */
export function rawRequest(
  port: number,
  bytes: string | Buffer,
  options: { limitMs?: number; endWrite?: boolean } = {},
): Promise<RawAnswer> {
  const limitMs = options.limitMs ?? 5000;
  return new Promise((resolve) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let closed = false;
    const socket = net.connect({ port, host: '127.0.0.1' });
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : 0, closed, ms: performance.now() - started });
      socket.destroy();
    };
    const timer = setTimeout(finish, limitMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // A complete answer on a connection kept alive: no need to wait for the close.
      if (complete(Buffer.concat(chunks).toString('latin1'))) finish();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('connect', () => {
      socket.write(bytes);
      if (options.endWrite) socket.end();
    });
  });
}

/** Whether `text` holds a whole answer with a Content-Length (or a chunked one with its last chunk). */
function complete(text: string): boolean {
  const at = text.indexOf('\r\n\r\n');
  if (at < 0) return false;
  const head = text.slice(0, at);
  if (/transfer-encoding: chunked/i.test(head)) return text.endsWith('0\r\n\r\n');
  const len = /content-length: (\d+)/i.exec(head);
  return len !== null && text.length - at - 4 >= Number(len[1]);
}

/** The body of a raw HTTP/1.1 answer (Content-Length or chunked). */
export function rawBody(text: string): string {
  const at = text.indexOf('\r\n\r\n');
  if (at < 0) return '';
  const head = text.slice(0, at);
  const rest = text.slice(at + 4);
  if (!/transfer-encoding: chunked/i.test(head)) {
    const len = /content-length: (\d+)/i.exec(head);
    return len ? rest.slice(0, Number(len[1])) : rest;
  }
  let body = '';
  let i = 0;
  while (i < rest.length) {
    const eol = rest.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = Number.parseInt(rest.slice(i, eol), 16);
    if (!size) break;
    body += rest.slice(eol + 2, eol + 2 + size);
    i = eol + 2 + size + 2;
  }
  return body;
}

// ---- arbitraries --------------------------------------------------------------------------------

/** Percent-encodes a string as UTF-8, lone surrogates included (as the invalid bytes ED A0 80…). */
export function percentEncode(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out +=
        `%${(0xe0 | (cp >> 12)).toString(16)}%${(0x80 | ((cp >> 6) & 0x3f)).toString(16)}%${(0x80 | (cp & 0x3f)).toString(16)}`.toUpperCase();
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

/** Invalid or odd percent-escapes, left as they are in the query string. */
const rawEscapes = fc.constantFrom(
  '%',
  '%G1',
  '%zz',
  '%FF',
  '%FE%FF',
  '%C0%80',
  '%C0%AF',
  '%ED%A0%80',
  '%ED%BF%BF',
  '%F4%90%80%80',
  '%E2%82',
  '%F0%9F',
  '%00',
  '%01%02%1F',
  '%7F',
  '%0D%0A',
  '%0D%0ASet-Cookie:%20x=1',
  '%2500',
  '%u0041',
  '%%',
  '+',
  '%2B%20',
  '%26%3D',
  '%E2%80%AE',
  '%EF%BB%BF',
);

/** Values that mean something to some parameter, or used to mean trouble somewhere. */
const meaningful = fc.constantFrom(
  '',
  ' ',
  'x',
  'Berlin',
  'jupiter',
  'breaking bad',
  'weather in Paris',
  '100 usd to eur',
  '2+2*3',
  'sha256 hello',
  'qr hello',
  'my ip',
  'provider_01',
  'provider_01,provider_02 provider_04',
  'PROVIDER_03',
  'all',
  ',',
  'bing',
  'on',
  'off',
  'd',
  'Y',
  '0',
  '-1',
  '51',
  '1e309',
  'NaN',
  'Infinity',
  '0x10',
  '1_0',
  '１２',
  '٣',
  '99999999999999999999999',
  '2.5',
  '90',
  '-90.0000001',
  '180',
  '.5',
  'de',
  'zz-ZZ',
  'auto',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '{{7*7}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell-style string, literally
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'https://example.com/a.jpg',
  'javascript:alert(1)',
  '//evil.example',
  '/\\evil.example',
  'svc_sk_00000000.AAAA',
);

/** One query-string value, already encoded (or deliberately mis-encoded). */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: meaningful.map(percentEncode) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map(percentEncode) },
  { weight: 2, arbitrary: rawEscapes },
  {
    weight: 2,
    arbitrary: fc
      .tuple(meaningful, rawEscapes, fc.string({ maxLength: 8 }))
      .map(([a, e, b]) => percentEncode(a) + e + percentEncode(b)),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.integer({ min: 0, max: 31 }).map((n) => String.fromCharCode(n)), maxLength: 12 })
      .map(percentEncode),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('a', 'é', '😀', '%FF', 'x y'), fc.constantFrom(1999, 2000, 2001, 5001, 20_000, 60_000))
      .map(([unit, n]) => (unit === '%FF' ? unit : percentEncode(unit)).repeat(n)),
  },
);

/** Parameter names: the endpoints' own, some hostile, some random. */
export const queryName: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'q',
      'query',
      'exclude_url',
      'engine',
      'safe',
      'lang',
      'page',
      'date',
      'limit',
      'lat',
      'lon',
      'label',
      'text',
      'target',
      'source',
      'token',
      'next',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'hasOwnProperty', 'toString', '', 'Q', 'q ', 'q%00'),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }).map(percentEncode) },
);

/** How a parameter is written: `n=v`, repeated, as an array, without `=`… */
const queryPart: fc.Arbitrary<string> = fc
  .tuple(
    queryName,
    queryValue,
    fc.constantFrom('plain', 'plain', 'plain', 'repeat', 'array', 'indexed', 'bare', 'nested'),
  )
  .chain(([name, value, form]) => {
    switch (form) {
      case 'repeat':
        return queryValue.map((other) => `${name}=${value}&${name}=${other}&${name}=`);
      case 'array':
        return fc.constant(`${name}[]=${value}&${name}[]=${value}`);
      case 'indexed':
        return fc.constant(`${name}[0]=${value}&${name}[1]=x`);
      case 'bare':
        return fc.constant(name);
      case 'nested':
        return fc.constant(`${name}[a][b]=${value}`);
      default:
        return fc.constant(`${name}=${value}`);
    }
  });

/** A whole query string (without the `?`), sometimes with odd separators. */
export const queryString: fc.Arbitrary<string> = fc
  .tuple(fc.array(queryPart, { maxLength: 6 }), fc.constantFrom('&', '&', '&', '&&', ';', '&amp;'))
  .map(([parts, sep]) => parts.join(sep));

/** Request methods fastify and node know (inject refuses the others; raw sockets try those). */
export const method = fc.constantFrom(
  'GET',
  'GET',
  'HEAD',
  'POST',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'SEARCH',
  'LOCK',
  'COPY',
);

/** An Authorization value: well-formed, malformed, oversized. `key` is a valid API key. */
export function authorization(key: string): fc.Arbitrary<string | string[] | undefined> {
  const prefix = key.slice(0, 15);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(`Api-Key ${key}`) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        undefined,
        '',
        ' ',
        'Api-Key',
        'Api-Key ',
        `Api-Key  ${key}`,
        `api-key ${key}`,
        `Bearer ${key}`,
        `Basic ${Buffer.from('user:pass').toString('base64')}`,
        'Basic !!!',
        `Api-Key ${key} extra`,
        `Api-Key ${key}x`,
        `Api-Key ${key.slice(0, -1)}`,
        `Api-Key ${prefix}`,
        `Api-Key ${prefix}.`,
        'Api-Key svc_sk_.',
        'Api-Key svc_sk_zzzzzzzz.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        "Api-Key svc_sk_'OR'1'='.x",
        'Api-Key svc_sk_%00%00%00%00.x',
        `Api-Key ${key.toUpperCase()}`,
        'Digest username="x"',
        'Negotiate YIIx',
        'Api-Key ＳＶＣ',
        'Bearer null',
        'Bearer undefined',
        'Bearer [object Object]',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(1_000, 8_000, 16_000, 100_000).map((n) => `Api-Key svc_sk_${'a'.repeat(n)}`),
    },
    { weight: 1, arbitrary: fc.constant<string[]>([`Api-Key ${key}`, 'Api-Key svc_sk_00000000.x']) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => `Api-Key ${s}`) },
  );
}

/** Other headers a client may send, well- or ill-formed. */
export const extraHeaders: fc.Arbitrary<Record<string, string | string[]>> = fc.dictionary(
  fc.constantFrom(
    'x-api-key',
    'x-request-id',
    'x-forwarded-for',
    'x-forwarded-proto',
    'x-forwarded-host',
    'host',
    'accept',
    'accept-encoding',
    'accept-language',
    'cookie',
    'user-agent',
    'referer',
    'origin',
    'range',
    'if-none-match',
    'x-monitor-token',
    'content-length',
    'expect',
  ),
  fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'x',
      '*/*',
      'application/json;q=0',
      'gzip;q=0, identity;q=0',
      'br, zstd, *',
      '127.0.0.1, 10.0.0.1, ::1',
      'not-an-ip, , ,',
      'sift_session=garbage; sift_session=other',
      'a=b; =; ;;; c',
      'bytes=0-0,1-1,2-2',
      'bytes=999999999999-',
      '100-continue',
      '0',
      '-1',
      'example.com:99999',
      '[::1]:80',
      'ftp',
    ),
    fc.string({ unit: 'grapheme-ascii', maxLength: 30 }),
    fc.constantFrom(4_000, 12_000).map((n) => 'v'.repeat(n)),
    fc.array(fc.constantFrom('a', 'b', 'svc_sk_00000000.x'), { minLength: 2, maxLength: 3 }),
  ),
  { maxKeys: 3 },
);

/** A request body and the content type it is sent with. */
export interface FuzzBody {
  contentType: string | undefined;
  payload: string | Buffer | undefined;
  label: string;
}

function nested(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=nonsense',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=latin1',
  'text/plain',
  'text/html',
  'multipart/form-data; boundary=xyz',
  'multipart/form-data',
  'application/xml',
  'application/octet-stream',
  'application/vnd.api+json',
  ';;;',
  'application/',
  '/json',
  'application/json, text/plain',
  'APPLICATION/JSON',
);

const payload: fc.Arbitrary<{ payload: string | Buffer | undefined; label: string }> = fc.oneof(
  fc.constantFrom(
    { payload: undefined, label: 'none' },
    { payload: '', label: 'empty' },
    { payload: '{', label: 'truncated JSON' },
    { payload: '{"q": "hello", "target": "de"', label: 'truncated JSON object' },
    { payload: '{"q": "hello", "target": "de"}', label: 'translation JSON' },
    { payload: '{"q": ["a", "b"], "target": {"x": 1}}', label: 'JSON with wrong field types' },
    { payload: '{"q": "\\ud800", "target": "de"}', label: 'JSON lone surrogate' },
    { payload: '{"q": "a\\u0000b", "target": "de\\u0000"}', label: 'JSON NUL' },
    { payload: '{"__proto__": {"polluted": true}, "q": "x", "target": "de"}', label: 'JSON __proto__' },
    { payload: '{"constructor": {"prototype": {"polluted": true}}}', label: 'JSON constructor.prototype' },
    { payload: 'null', label: 'JSON null' },
    { payload: '[]', label: 'JSON array' },
    { payload: '"text"', label: 'JSON string' },
    { payload: '1e999', label: 'JSON huge number' },
    { payload: 'q=hello&target=de', label: 'form' },
    { payload: 'q=a&q=b&q[]=c&target=de&target=fr', label: 'form with repeats' },
    { payload: 'q=%FF%FE&target=%00', label: 'form with bad escapes' },
    { payload: '__proto__[polluted]=1&constructor[prototype][x]=1', label: 'form __proto__' },
    { payload: '--xyz\r\nContent-Disposition: form-data; name="q"\r\n\r\nhello\r\n--xyz--', label: 'multipart' },
    { payload: Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0xc0]), label: 'binary' },
    { payload: Buffer.from('{"q":"hello","target":"de"}', 'utf16le'), label: 'UTF-16 JSON' },
    { payload: '\ufeff{"q":"hello","target":"de"}', label: 'JSON with BOM' },
    {
      payload: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
      label: 'XML entity',
    },
  ),
  fc.constantFrom(5_000, 50_000).map((d) => ({ payload: nested(d, '[', ']'), label: `JSON ${d} deep arrays` })),
  fc.constantFrom(5_000, 50_000).map((d) => ({ payload: nested(d, '{"a":', '}'), label: `JSON ${d} deep objects` })),
  fc
    .constantFrom(2_000, 20_000)
    .map((d) => ({ payload: nested(d, '{"__proto__":', '}', '{}'), label: `JSON ${d} deep __proto__` })),
  fc.constantFrom(1_000, 30_000).map((d) => ({ payload: `${'a[b]'.repeat(d)}=1`, label: `form ${d} deep brackets` })),
  fc.string({ unit: 'binary', maxLength: 200 }).map((s) => ({ payload: s, label: 'random text' })),
  fc.json({ maxDepth: 4 }).map((s) => ({ payload: s, label: 'random JSON' })),
);

export const body: fc.Arbitrary<FuzzBody> = fc
  .tuple(contentType, payload)
  .map(([type, p]) => ({ contentType: type, payload: p.payload, label: `${p.label} as ${type ?? 'no type'}` }));

/** A body over every limit (10 MB) in a few shapes: the shape only, `hugePayload` builds it (a counterexample stays short). */
export const hugeBody: fc.Arbitrary<{ contentType: string; shape: 'json' | 'form' | 'bytes' }> = fc.record({
  contentType: fc.constantFrom(
    'application/json',
    'application/x-www-form-urlencoded',
    'text/plain',
    'application/octet-stream',
  ),
  shape: fc.constantFrom('json' as const, 'form' as const, 'bytes' as const),
});

export function hugePayload(b: { contentType: string; shape: 'json' | 'form' | 'bytes' }): FuzzBody {
  const size = 10 * 1024 * 1024;
  const payload =
    b.shape === 'json'
      ? `{"q":"${'a'.repeat(size)}","target":"de"}`
      : b.shape === 'form'
        ? `q=${'a'.repeat(size)}&target=de`
        : Buffer.alloc(size, 0x61);
  return { contentType: b.contentType, payload, label: `10 MB ${b.shape} as ${b.contentType}` };
}

/** Numbers as people (and attackers) type them. */
const numberText = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.double({ noNaN: false }).map(String),
  fc.constantFrom(
    '0',
    '-0',
    '1e308',
    '1e-308',
    '1e400',
    '9'.repeat(400),
    '0x' + 'f'.repeat(300),
    '0b' + '1'.repeat(2000),
    '.5',
    '5.',
    '1_000',
    '1,000,000',
    '١٢٣',
    '½',
    'Infinity',
    'NaN',
  ),
);

/** Arithmetic, deep and wide: the maths answer's parser and its bounds. */
const expression: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    fc.constantFrom('pi', 'e', 'tau', 'x', 'ans', 'constructor', '__proto__'),
    fc
      .tuple(tie('e'), fc.constantFrom('+', '-', '*', '/', '^', '**', '%', 'mod', '//', '×', '÷'), tie('e'))
      .map(([a, op, b]) => `${a} ${op} ${b}`),
    fc
      .tuple(
        fc.constantFrom('sqrt', 'sin', 'log', 'ln', 'exp', 'factorial', 'abs', 'floor', 'eval', 'require', 'import'),
        tie('e'),
      )
      .map(([f, a]) => `${f}(${a})`),
    tie('e').map((a) => `(${a})`),
    tie('e').map((a) => `${a}!`),
    tie('e').map((a) => `-${a}`),
  ),
})).e;

/** Queries for the instant answers: every kind of answer, pushed to its edges. */
export const instantQuery: fc.Arbitrary<string> = fc.oneof(
  expression,
  fc.constantFrom(
    '9^9^9^9',
    '2^1000000',
    '10!!!!',
    '1000000!',
    'factorial(100000)',
    `${'('.repeat(5000)}1${')'.repeat(5000)}`,
    `${'1+'.repeat(1000)}1`,
    `${'-'.repeat(1999)}1`,
    'regex (a+)+$',
    `regex ${'(a+)+'.repeat(50)}$ ${'a'.repeat(50)}b`,
    `json ${'['.repeat(1990)}`,
    `json ${'['.repeat(900)}${']'.repeat(900)}`,
    `${'{"a":'.repeat(399)}1${'}'.repeat(399)}`,
    `qr ${'x'.repeat(1990)}`,
    `qr ${'😀'.repeat(990)}`,
    'password 100000',
    'password -1',
    'uuid 1000000',
    'roll 1000000d1000000',
    'roll 99999999999999999999d6',
    'random number between 1 and 1e308',
    'random number between -1e308 and 1e308',
    'timer 99999999999 hours',
    'unix 99999999999999999999',
    'timestamp -1e20',
    'time in %00',
    'time in Atlantis',
    'port 99999',
    'port -1',
    'http 999',
    'http 1e3',
    '#zzzzzz',
    'rgb(999,-999,1e400)',
    'hsl(-1, 200%, NaN%)',
    'base64 decode ====',
    'base64 decode %%%%',
    'url decode %E0%A4%A',
    'url decode %',
    'sha256 \u0000',
    'md5 \ud800',
    '1e400 km to m',
    '1 light year to nm',
    '-273.16 c to k',
    '1e308 usd to eur',
    '100 usd to xxx',
    '100 xxx to usd',
    'weather in \u0000',
    'weather in ' + 'a'.repeat(1990),
    'my ip',
    'what is my ip %00',
  ),
  fc
    .tuple(
      fc.constantFrom(
        'md5',
        'sha1',
        'sha256',
        'sha512',
        'base64',
        'base64 encode',
        'base64 decode',
        'url encode',
        'url decode',
        'rot13',
        'hex',
        'binary',
        'qr',
        'json',
        'regex',
        'color',
        'time in',
        'weather in',
        'timer',
        'unix',
        'port',
        'http',
        'password',
        'roll',
        'flip a coin',
        'uuid',
      ),
      fc.oneof(numberText, fc.string({ unit: 'binary', maxLength: 60 }), fc.constantFrom('', ' ', 'a'.repeat(1900))),
    )
    .map(([trigger, arg]) => `${trigger} ${arg}`),
  fc
    .tuple(
      numberText,
      fc.constantFrom(
        'km',
        'm',
        'mi',
        'kg',
        'lb',
        'c',
        'f',
        'k',
        'usd',
        'eur',
        'jpy',
        'btc',
        'gb',
        'kib',
        'parsec',
        '%',
        'binary',
        'hex',
        'octal',
        'base 36',
        'base 1',
        'base 99',
      ),
      fc.constantFrom('to', 'in', 'as', '->', '='),
      fc.constantFrom('m', 'ft', 'g', 'k', 'f', 'eur', 'usd', 'mb', 'binary', 'hex', 'base 2', 'base 0', 'roman'),
    )
    .map(([n, a, word, b]) => `${n} ${a} ${word} ${b}`),
);
