import { alternation, mayStartWith } from './text.js';
import type { InstantHandler } from './types.js';
import { HTTP_VOCABULARY } from './vocabulary.js';

/*
 * `http`: an HTTP status code explained ("http 404", "404 status code",
 * "error 503", "418 I'm a teapot"). Only registered codes (IANA registry,
 * plus 418). Fields: `code`, `name`, `description`, `category`
 * (informational|success|redirection|client_error|server_error),
 * `category_label`, `is_error` (4xx and 5xx).
 */

export const HTTP_STATUSES: Record<number, [name: string, description: string]> = {
  100: ['Continue', 'The server has received the request headers; the client should send the body.'],
  101: ['Switching Protocols', 'The server is switching to the protocol the client asked for (e.g. WebSocket).'],
  102: ['Processing', 'The server has accepted the request but has not finished it yet (WebDAV).'],
  103: ['Early Hints', 'Headers sent ahead of the final response so the client can preload resources.'],
  200: ['OK', 'The request succeeded.'],
  201: ['Created', 'The request succeeded and a new resource was created.'],
  202: ['Accepted', 'The request was accepted for processing, which has not finished.'],
  203: ['Non-Authoritative Information', 'The response comes from a transforming proxy, not the origin server.'],
  204: ['No Content', 'The request succeeded and there is no content to send back.'],
  205: ['Reset Content', 'The request succeeded; the client should reset the document view.'],
  206: ['Partial Content', 'Only part of the resource is sent, as the Range header asked.'],
  207: ['Multi-Status', 'Several status codes for several operations (WebDAV).'],
  208: ['Already Reported', 'Members already listed earlier in this response are not repeated (WebDAV).'],
  226: ['IM Used', 'The response is the result of instance manipulations applied to the resource.'],
  300: ['Multiple Choices', 'The resource has several representations to choose from.'],
  301: ['Moved Permanently', 'The resource has a new permanent URL, given in the Location header.'],
  302: ['Found', 'The resource is temporarily at another URL, given in the Location header.'],
  303: ['See Other', 'The response is at another URL, to be fetched with GET.'],
  304: ['Not Modified', 'The cached copy is still valid; no body is sent.'],
  305: ['Use Proxy', 'The resource must be accessed through a proxy (deprecated).'],
  307: [
    'Temporary Redirect',
    'The resource is temporarily at another URL; repeat the request there with the same method.',
  ],
  308: ['Permanent Redirect', 'The resource has a new permanent URL; repeat the request there with the same method.'],
  400: ['Bad Request', 'The server cannot process the request because it is malformed.'],
  401: ['Unauthorized', 'Authentication is required and has failed or was not provided.'],
  402: ['Payment Required', 'Reserved for future use; some services use it for payment or quota errors.'],
  403: ['Forbidden', 'The server understood the request but refuses to authorize it.'],
  404: ['Not Found', 'The server cannot find the requested resource.'],
  405: ['Method Not Allowed', 'The request method is not supported for this resource.'],
  406: ['Not Acceptable', 'No representation matches the Accept headers of the request.'],
  407: ['Proxy Authentication Required', 'The client must first authenticate with the proxy.'],
  408: ['Request Timeout', 'The server timed out waiting for the request.'],
  409: ['Conflict', 'The request conflicts with the current state of the resource.'],
  410: ['Gone', 'The resource is no longer available and will not be again.'],
  411: ['Length Required', 'The request did not specify the length of its content.'],
  412: ['Precondition Failed', 'A precondition in the request headers was not met.'],
  413: ['Content Too Large', 'The request body is larger than the server is willing to process.'],
  414: ['URI Too Long', 'The URI is longer than the server is willing to interpret.'],
  415: ['Unsupported Media Type', 'The request body is in a format the server does not support.'],
  416: ['Range Not Satisfiable', 'The requested range cannot be served.'],
  417: ['Expectation Failed', 'The server cannot meet the Expect request header.'],
  418: ["I'm a teapot", 'The server refuses to brew coffee because it is a teapot (RFC 2324, an April Fools joke).'],
  421: ['Misdirected Request', 'The request was sent to a server that cannot produce a response for it.'],
  422: ['Unprocessable Content', 'The request is well-formed but has semantic errors.'],
  423: ['Locked', 'The resource is locked (WebDAV).'],
  424: ['Failed Dependency', 'The request failed because a request it depended on failed (WebDAV).'],
  425: ['Too Early', 'The server will not process a request that might be replayed.'],
  426: ['Upgrade Required', 'The client should switch to another protocol.'],
  428: ['Precondition Required', 'The server requires the request to be conditional.'],
  429: ['Too Many Requests', 'The client has sent too many requests in a given time (rate limiting).'],
  431: ['Request Header Fields Too Large', 'The request headers are too large.'],
  451: [
    'Unavailable For Legal Reasons',
    'The resource is unavailable for legal reasons (e.g. censorship or a court order).',
  ],
  500: [
    'Internal Server Error',
    'The server met an unexpected condition that prevented it from fulfilling the request.',
  ],
  501: ['Not Implemented', 'The server does not support the functionality required to fulfil the request.'],
  502: ['Bad Gateway', 'The server, acting as a gateway or proxy, got an invalid response from upstream.'],
  503: [
    'Service Unavailable',
    'The server is temporarily unable to handle the request (overloaded or down for maintenance).',
  ],
  504: ['Gateway Timeout', 'The server, acting as a gateway or proxy, did not get a response from upstream in time.'],
  505: ['HTTP Version Not Supported', 'The server does not support the HTTP version used in the request.'],
  506: ['Variant Also Negotiates', 'The server has an internal configuration error in content negotiation.'],
  507: ['Insufficient Storage', 'The server cannot store the representation needed to complete the request (WebDAV).'],
  508: ['Loop Detected', 'The server detected an infinite loop while processing the request (WebDAV).'],
  510: ['Not Extended', 'Further extensions to the request are required for the server to fulfil it.'],
  511: [
    'Network Authentication Required',
    'The client needs to authenticate to gain network access (captive portals).',
  ],
};

const CATEGORIES: [category: string, label: string][] = [
  ['informational', 'Informational'],
  ['success', 'Success'],
  ['redirection', 'Redirection'],
  ['client_error', 'Client error'],
  ['server_error', 'Server error'],
];

export function describeStatus(code: number): Record<string, unknown> | null {
  const entry = HTTP_STATUSES[code];
  if (!entry) return null;
  const [category, category_label] = CATEGORIES[Math.floor(code / 100) - 1]!;
  return { code, name: entry[0], description: entry[1], category, category_label, is_error: code >= 400 };
}

const V = Object.values(HTTP_VOCABULARY);
const CODE = '([1-5]\\d\\d)';

/**
 * Whether `text` may start with a status code and a space as `^${CODE}\\s` reads them: false only
 * when one of its first four characters cannot be so (most queries: "17 * 7 + 3", "md5 hello").
 */
export function mayStartWithCode(text: string): boolean {
  // A character past the end reads NaN, which no test below refuses: the expression decides.
  const a = text.charCodeAt(0);
  if (a < 49 || a > 53) return false;
  const b = text.charCodeAt(1);
  if (b < 48 || b > 57) return false;
  const c = text.charCodeAt(2);
  if (c < 48 || c > 57) return false;
  const space = text.charCodeAt(3);
  return !(space < 128 && space !== 32 && (space < 9 || space > 13));
}

/** Each expression with a test of the query's start that it needs. */
const PATTERNS = [
  {
    re: new RegExp(`^${alternation(V.flatMap((v) => v.prefixes))}\\s*:?\\s*${CODE}(?:\\s+(.+))?$`, 'u'),
    may: mayStartWith(V.flatMap((v) => v.prefixes)),
  },
  { re: new RegExp(`^${CODE}\\s+${alternation(V.flatMap((v) => v.suffixes))}$`, 'u'), may: mayStartWithCode },
  { re: new RegExp(`^${CODE}\\s+(.+)$`, 'u'), may: mayStartWithCode },
];

const simplify = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '');

export const httpHandler: InstantHandler = {
  type: 'http',
  answer(ctx) {
    for (let i = 0; i < PATTERNS.length; i++) {
      const { re, may } = PATTERNS[i]!;
      const m = may(ctx.text) ? re.exec(ctx.text) : null;
      if (!m) continue;
      const code = Number(m[1]);
      const described = describeStatus(code);
      if (!described) return null;
      const rest = m[2];
      // "404 not found", "http 404 not found": the words after the code must be the code's name.
      if (rest !== undefined && simplify(rest) !== simplify(HTTP_STATUSES[code]![0])) {
        if (i === 2 || !/^(?:error|status|code|status code|response)$/.test(rest)) return null;
      }
      return described;
    }
    return null;
  },
};
