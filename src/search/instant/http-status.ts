import { STATUS_CODES } from 'node:http';
import { alternation } from './text.js';
import type { InstantHandler } from './types.js';
import { HTTP_VOCABULARY } from './vocabulary.js';

/*
 * `http`: an HTTP status code explained ("http 404", "404 status code",
 * "error 503", "418 I'm a teapot"). Only registered codes (IANA registry,
 * plus 418). Fields: `code`, `name`, `description`, `category`
 * (informational|success|redirection|client_error|server_error),
 * `category_label`, `is_error` (4xx and 5xx).
 */

/**
 * The registered codes (IANA's registry, plus 418), each with what it means. Names come from
 * http.STATUS_CODES, except three that Node still gives otherwise (RENAMED: RFC 9110 renamed 413 and
 * 422, and RFC 2324 writes "I'm a teapot"); Node's 509 is not registered, so no answer.
 */
const DESCRIPTIONS: Record<number, string> = {
  100: 'The server has received the request headers; the client should send the body.',
  101: 'The server is switching to the protocol the client asked for (e.g. WebSocket).',
  102: 'The server has accepted the request but has not finished it yet (WebDAV).',
  103: 'Headers sent ahead of the final response so the client can preload resources.',
  200: 'The request succeeded.',
  201: 'The request succeeded and a new resource was created.',
  202: 'The request was accepted for processing, which has not finished.',
  203: 'The response comes from a transforming proxy, not the origin server.',
  204: 'The request succeeded and there is no content to send back.',
  205: 'The request succeeded; the client should reset the document view.',
  206: 'Only part of the resource is sent, as the Range header asked.',
  207: 'Several status codes for several operations (WebDAV).',
  208: 'Members already listed earlier in this response are not repeated (WebDAV).',
  226: 'The response is the result of instance manipulations applied to the resource.',
  300: 'The resource has several representations to choose from.',
  301: 'The resource has a new permanent URL, given in the Location header.',
  302: 'The resource is temporarily at another URL, given in the Location header.',
  303: 'The response is at another URL, to be fetched with GET.',
  304: 'The cached copy is still valid; no body is sent.',
  305: 'The resource must be accessed through a proxy (deprecated).',
  307: 'The resource is temporarily at another URL; repeat the request there with the same method.',
  308: 'The resource has a new permanent URL; repeat the request there with the same method.',
  400: 'The server cannot process the request because it is malformed.',
  401: 'Authentication is required and has failed or was not provided.',
  402: 'Reserved for future use; some services use it for payment or quota errors.',
  403: 'The server understood the request but refuses to authorize it.',
  404: 'The server cannot find the requested resource.',
  405: 'The request method is not supported for this resource.',
  406: 'No representation matches the Accept headers of the request.',
  407: 'The client must first authenticate with the proxy.',
  408: 'The server timed out waiting for the request.',
  409: 'The request conflicts with the current state of the resource.',
  410: 'The resource is no longer available and will not be again.',
  411: 'The request did not specify the length of its content.',
  412: 'A precondition in the request headers was not met.',
  413: 'The request body is larger than the server is willing to process.',
  414: 'The URI is longer than the server is willing to interpret.',
  415: 'The request body is in a format the server does not support.',
  416: 'The requested range cannot be served.',
  417: 'The server cannot meet the Expect request header.',
  418: 'The server refuses to brew coffee because it is a teapot (RFC 2324, an April Fools joke).',
  421: 'The request was sent to a server that cannot produce a response for it.',
  422: 'The request is well-formed but has semantic errors.',
  423: 'The resource is locked (WebDAV).',
  424: 'The request failed because a request it depended on failed (WebDAV).',
  425: 'The server will not process a request that might be replayed.',
  426: 'The client should switch to another protocol.',
  428: 'The server requires the request to be conditional.',
  429: 'The client has sent too many requests in a given time (rate limiting).',
  431: 'The request headers are too large.',
  451: 'The resource is unavailable for legal reasons (e.g. censorship or a court order).',
  500: 'The server met an unexpected condition that prevented it from fulfilling the request.',
  501: 'The server does not support the functionality required to fulfil the request.',
  502: 'The server, acting as a gateway or proxy, got an invalid response from upstream.',
  503: 'The server is temporarily unable to handle the request (overloaded or down for maintenance).',
  504: 'The server, acting as a gateway or proxy, did not get a response from upstream in time.',
  505: 'The server does not support the HTTP version used in the request.',
  506: 'The server has an internal configuration error in content negotiation.',
  507: 'The server cannot store the representation needed to complete the request (WebDAV).',
  508: 'The server detected an infinite loop while processing the request (WebDAV).',
  510: 'Further extensions to the request are required for the server to fulfil it.',
  511: 'The client needs to authenticate to gain network access (captive portals).',
};

const RENAMED: Record<number, string> = {
  413: 'Content Too Large',
  418: "I'm a teapot",
  422: 'Unprocessable Content',
};

/** A registered code's name ("Not Found"), or undefined. */
export function statusName(code: number): string | undefined {
  if (!Object.hasOwn(DESCRIPTIONS, code)) return undefined;
  return RENAMED[code] ?? STATUS_CODES[code];
}

const CATEGORIES: [category: string, label: string][] = [
  ['informational', 'Informational'],
  ['success', 'Success'],
  ['redirection', 'Redirection'],
  ['client_error', 'Client error'],
  ['server_error', 'Server error'],
];

export function describeStatus(code: number): Record<string, unknown> | null {
  const name = statusName(code);
  if (name === undefined) return null;
  const [category, category_label] = CATEGORIES[Math.floor(code / 100) - 1]!;
  return { code, name, description: DESCRIPTIONS[code], category, category_label, is_error: code >= 400 };
}

const V = Object.values(HTTP_VOCABULARY);
const CODE = '([1-5]\\d\\d)';

const PATTERNS = [
  new RegExp(`^${alternation(V.flatMap((v) => v.prefixes))}\\s*:?\\s*${CODE}(?:\\s+(.+))?$`, 'u'),
  new RegExp(`^${CODE}\\s+${alternation(V.flatMap((v) => v.suffixes))}$`, 'u'),
  new RegExp(`^${CODE}\\s+(.+)$`, 'u'),
];

const simplify = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '');

export const httpHandler: InstantHandler = {
  type: 'http',
  async answer(ctx) {
    for (const [i, re] of PATTERNS.entries()) {
      const m = re.exec(ctx.text);
      if (!m) continue;
      const code = Number(m[1]);
      const described = describeStatus(code);
      if (!described) return null;
      const rest = m[2];
      // "404 not found", "http 404 not found": the words after the code must be the code's name.
      if (rest !== undefined && simplify(rest) !== simplify(statusName(code)!)) {
        if (i === 2 || !/^(?:error|status|code|status code|response)$/.test(rest)) return null;
      }
      return described;
    }
    return null;
  },
};
