import { TextDecoder } from '@exodus/bytes/encoding.js';
import htmlEncodingSniffer from 'html-encoding-sniffer';
import { computedMIMEType, MIMEType } from 'whatwg-mimetype';
import { ContentsFailure } from './reasons.js';

/*
 * What a fetched body is and how its text reads. The type is the Content-Type header's, or sniffed
 * from the bytes when the header is missing or says nothing (WHATWG MIME Sniffing, by
 * whatwg-mimetype). The charset is found as browsers find it (WHATWG HTML's encoding sniffing, by
 * html-encoding-sniffer): a byte order mark, else the header's charset, else a <meta charset> or
 * <meta http-equiv> in the first 1024 bytes; for XHTML the <?xml encoding?> declaration. A page
 * that declares nothing is read as UTF-8 when it is valid UTF-8, else as windows-1252.
 * Decoding is @exodus/bytes' TextDecoder (the WHATWG Encoding Standard, its legacy single- and
 * multi-byte encodings included), not the platform's: Node 20's TextDecoder reads windows-1252,
 * the encoding of every page labelled ISO-8859-1 or ASCII, as Latin-1, so “ ” — € and the other
 * characters of 0x80-0x9F come out as control characters (nodejs/node#56542).
 */

export type PageKind = 'html' | 'text' | 'pdf';

const KINDS: Record<string, PageKind> = {
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/plain': 'text',
  'application/pdf': 'pdf',
};

/** The MIME type of a Content-Type header, or undefined when it is missing or unparsable. */
export function parseContentType(header: string | undefined): MIMEType | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  return MIMEType.parse(header) ?? undefined;
}

/** Types that say nothing of the body: sniffed instead (WHATWG MIME Sniffing, "unknown" types). */
const UNKNOWN = new Set(['unknown/unknown', 'application/unknown', '*/*']);

/**
 * The generic binary type, which many servers give every download: read when the body is a PDF
 * (it starts with the PDF signature), refused otherwise.
 */
const OCTET_STREAM = 'application/octet-stream';
const PDF_SIGNATURE = Buffer.from('%PDF-');

/**
 * Refuses, before the body is read, a response whose header names a type that is never read
 * (an image, a video, JSON…). A missing or unknown type is decided once the body is there.
 */
export function refuseUnreadableType(header: string | undefined): void {
  const type = parseContentType(header);
  if (!type || UNKNOWN.has(type.essence) || type.essence === OCTET_STREAM || KINDS[type.essence]) return;
  throw new ContentsFailure('unsupported_type', `${type.essence} is not a page (HTML, plain text or PDF)`);
}

/** The body's type and kind; throws unsupported_type for anything but HTML, XHTML, plain text and PDF. */
export function classifyBody(
  header: string | undefined,
  body: Uint8Array,
  noSniff: boolean,
): { kind: PageKind; contentType: string } {
  const type = computedMIMEType(body, {
    ...(header === undefined ? {} : { contentTypeHeader: header }),
    noSniff,
  });
  if (type.essence === OCTET_STREAM && PDF_SIGNATURE.equals(body.subarray(0, PDF_SIGNATURE.length))) {
    return { kind: 'pdf', contentType: 'application/pdf' };
  }
  const kind = KINDS[type.essence];
  if (!kind) throw new ContentsFailure('unsupported_type', `${type.essence} is not a page (HTML, plain text or PDF)`);
  return { kind, contentType: type.essence };
}

/** The encoding an XHTML document declares in its XML declaration, if any. */
function xmlDeclaredEncoding(body: Uint8Array): string | undefined {
  const head = Buffer.from(body.subarray(0, 1024)).toString('latin1');
  return /^<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head)?.[1];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of an HTML, XHTML or plain-text body, decoded with the charset it declares or shows. */
export function decodeText(body: Uint8Array, contentType: string, header: string | undefined): string {
  const charset = parseContentType(header)?.parameters.get('charset');
  const xhtml = contentType === 'application/xhtml+xml';
  const declared = charset ?? (xhtml ? xmlDeclaredEncoding(body) : undefined);
  let encoding = htmlEncodingSniffer(body, {
    // Plain text and XML have no <meta>: the sniffer then only reads the BOM.
    xml: contentType !== 'text/html',
    ...(declared === undefined ? {} : { transportLayerEncodingLabel: declared }),
    defaultEncoding: '',
  });
  if (encoding === '') {
    try {
      return utf8.decode(body);
    } catch {
      encoding = 'windows-1252';
    }
  }
  try {
    return new TextDecoder(encoding).decode(body);
  } catch {
    // An encoding the platform cannot decode (WHATWG's "replacement" for ISO-2022-KR and the like).
    return new TextDecoder('utf-8').decode(body);
  }
}
