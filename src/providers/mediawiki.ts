/*
 * Shared by the two MediaWiki Action APIs (Wikipedia, provider_08, and
 * Wikidata, provider_09): an error is answered with HTTP 200 and a body
 * {"error": {"code": "...", "info": "..."}}, which is a failed call.
 */

/** Throws when `json` is the Action API's in-band error object (its code in the message, never its text). */
export function rejectMediaWikiError(json: unknown): void {
  if (json !== null && typeof json === 'object' && !Array.isArray(json) && 'error' in json) {
    const err = (json as { error: unknown }).error;
    const code = err !== null && typeof err === 'object' && 'code' in err ? String(err.code) : 'unknown';
    throw new Error(`API error "${code.slice(0, 60)}"`);
  }
}
