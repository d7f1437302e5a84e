import { createRequire } from 'node:module';
import type QRCode from 'qrcode';
import { prefixMatcher, suffixMatcher, unquote } from './text.js';
import type { InstantHandler } from './types.js';
import { QR_VOCABULARY } from './vocabulary.js';

/* `qr`: a QR code of the given text ("qr https://example.com", "hello qr code"). Fields: `text`, `svg`. */

const afterPrefix = prefixMatcher(Object.values(QR_VOCABULARY).flatMap((v) => v.prefixes));
const beforeSuffix = suffixMatcher(Object.values(QR_VOCABULARY).flatMap((v) => v.suffixes));
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NOT_TEXT = new Set(Object.values(QR_VOCABULARY).flatMap((v) => v.notText));

/*
 * qrcode (pngjs with it: 57 modules, about 40 ms) is loaded by the first
 * code drawn, or by loadQrEncoder() once the server listens (app.ts), not
 * with the server.
 */
const require = createRequire(import.meta.url);
let encoder: typeof QRCode | undefined;

export function loadQrEncoder(): typeof QRCode {
  encoder ??= require('qrcode') as typeof QRCode;
  return encoder;
}

export const qrHandler: InstantHandler = {
  type: 'qr',
  async answer(ctx) {
    const raw = afterPrefix(ctx.q) ?? beforeSuffix(ctx.q);
    if (raw === null) return null;
    // "qr code generator", "qr code scanner app": about QR codes (quoted text is always encoded)
    if (!/^["']/.test(raw) && NOT_TEXT.has(raw.split(/\s+/)[0]!.toLowerCase())) return null;
    const text = unquote(raw);
    // Empty, or with a lone surrogate half (not text the QR encoder can take as UTF-8)
    if (text === '' || LONE_SURROGATE.test(text)) return null;
    const svg = await loadQrEncoder().toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    return { text, svg };
  },
};
