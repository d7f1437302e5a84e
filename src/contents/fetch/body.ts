import { pipeline, type Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { ContentsFailure } from './reasons.js';

/*
 * Reading a response body: decoded from gzip, deflate or brotli as it streams, and counted after
 * decoding, so a compressed body that expands past the cap (a gzip bomb) is stopped at the cap,
 * not after it has been inflated in memory.
 */

export interface ReadBodyOptions {
  /** The most decoded bytes to keep. */
  maxBytes: number;
  /** What passing `maxBytes` does: fail with too_large, or keep the first `maxBytes` (robots.txt). */
  whenOver: 'fail' | 'truncate';
}

function decoderFor(coding: string): Transform | undefined {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      // A body cut short still gives what it holds, as browsers show it.
      return zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'deflate':
      return zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      return undefined;
  }
}

/** The Content-Encoding codings in the order to undo them; throws unsupported_type for an unknown one. */
function decoders(contentEncoding: string | undefined): Transform[] {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  return codings.reverse().map((coding) => {
    const decoder = decoderFor(coding);
    if (!decoder) throw new ContentsFailure('unsupported_type', `the content encoding ${coding} is not supported`);
    return decoder;
  });
}

/** Stops reading `body` (closing its connection); the abort this causes is expected, not an error. */
export function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** The decoded body; rejects with too_large past the cap, or with the stream's own error. */
export async function readBody(
  body: Readable,
  contentEncoding: string | undefined,
  options: ReadBodyOptions,
): Promise<Buffer> {
  let chain: Transform[];
  try {
    chain = decoders(contentEncoding);
  } catch (err) {
    discard(body);
    throw err;
  }
  const decoded: Readable = chain.length === 0 ? body : (pipeline([body, ...chain], () => {}) as unknown as Readable);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of decoded as AsyncIterable<Buffer>) {
      const room = options.maxBytes - size;
      if (chunk.length > room) {
        if (options.whenOver === 'fail') {
          throw new ContentsFailure('too_large', `the page is larger than ${options.maxBytes} bytes`);
        }
        if (room > 0) chunks.push(chunk.subarray(0, room));
        size = options.maxBytes;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    // Stops the download (and any decoding) when the loop left early; a no-op once it has ended.
    discard(decoded);
    discard(body);
  }
  return Buffer.concat(chunks, size);
}
