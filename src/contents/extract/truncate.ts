/*
 * Content cut to a caller's max_chars: at the last paragraph break before the limit when one is
 * near it, else at the end of a sentence, else between words, and only as a last resort inside a
 * word; never over the limit, and never between the two halves of a surrogate pair.
 */

/** How far back from the limit a boundary is still "near": a share of the limit, and at most this. */
const NEAR_SHARE = 0.2;
const NEAR_MAX_CHARS = 2000;

const SENTENCE_END = /[.!?。！？…]["'”’)\]]*\s/g;

export function truncateContent(content: string, maxChars: number): { content: string; truncated: boolean } {
  const limit = Math.max(0, Math.floor(maxChars));
  if (content.length <= limit) return { content, truncated: false };
  const head = content.slice(0, limit + 1);
  const earliest = limit - Math.min(NEAR_MAX_CHARS, Math.ceil(limit * NEAR_SHARE));

  const paragraph = head.lastIndexOf('\n\n');
  if (paragraph > 0 && paragraph >= earliest) return cut(content, paragraph);

  let sentence = -1;
  for (const m of head.matchAll(SENTENCE_END)) {
    const end = m.index + m[0].trimEnd().length;
    if (end <= limit) sentence = end;
  }
  if (sentence > 0 && sentence >= earliest) return cut(content, sentence);

  const space = head.search(/\s\S*$/);
  if (space > 0 && space >= earliest) return cut(content, space);

  let end = limit;
  const code = content.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return cut(content, end);
}

function cut(content: string, end: number): { content: string; truncated: boolean } {
  return { content: content.slice(0, end).trimEnd(), truncated: true };
}
