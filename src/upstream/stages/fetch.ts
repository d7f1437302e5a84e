import type { HttpClient, LimitHeaders } from '../http.js';
import { oneLine, redactSecrets, requestSecrets } from '../redact.js';
import { type ProviderCall, UpstreamError } from '../../providers/types.js';

/*
 * Stage 5, fetch: the one HTTP request of a call (http.ts), its body read as JSON (or text when the
 * call asks for it) and given to the adapter's parser. A body that is not JSON, or a parser that
 * throws, is a `bad_response` failure whose message holds no secret.
 */

export interface FetchOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Told the rate-limit headers of a 2xx answer as soon as it arrives (before it is parsed). */
  onAnswer?: (limits: LimitHeaders) => void;
}

export async function fetchParsed<T>(
  http: HttpClient,
  call: ProviderCall<T>,
  secrets: readonly string[],
  options: FetchOptions,
): Promise<T> {
  const { provider } = call;
  const res = await http.request({ ...call.request, timeoutMs: options.timeoutMs, signal: options.signal });
  options.onAnswer?.(res.limitHeaders ?? {});
  const text = res.body.toString('utf8');
  let body: unknown = text;
  if (!call.text) {
    try {
      body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch {
      // An HTML page instead of JSON (a captive portal, a proxy's error page) says so by its type.
      const type =
        res.contentType && !/json/i.test(res.contentType) ? ` (content type ${oneLine(res.contentType, 60)})` : '';
      throw new UpstreamError(provider, 'bad_response', `response is not valid JSON${type}`, res.status);
    }
  }
  try {
    return call.parse(body);
  } catch (err) {
    // A parser may say precisely what is wrong (probes do).
    if (err instanceof UpstreamError) throw err;
    const all = [...secrets, ...requestSecrets(call.request.url, call.request.headers)];
    const why = err instanceof Error && err.message ? `: ${oneLine(redactSecrets(err.message, all), 120)}` : '';
    throw new UpstreamError(provider, 'bad_response', `unexpected response shape${why}`, res.status);
  }
}
