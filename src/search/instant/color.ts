import cssColorNames from 'color-name';
import { prefixMatcher, suffixMatcher } from './text.js';
import type { InstantHandler } from './types.js';
import { COLOR_VOCABULARY } from './vocabulary.js';

/*
 * `color`: a colour given as hex (`#ff0000`, `#f00`), `rgb(255, 0, 0)` or
 * `hsl(0, 100%, 50%)`, with each of the other notations computed. With a
 * colour word around it ("color ff0000", "red to hex", "#f00 to rgb") bare
 * hex digits and CSS colour names are accepted too. Fields: `hex`
 * (`#RRGGBB`), `rgb`, `hsl` (CSS notation), `r`, `g`, `b` (0-255), `h`
 * (0-359), `s`, `l` (0-100, percent).
 */

// CSS Color Module Level 4 named colours (keywords, the same in every language).
const CSS_COLORS: ReadonlyMap<string, readonly [number, number, number]> = new Map(Object.entries(cssColorNames));

export interface Rgb {
  r: number;
  g: number;
  b: number;
}
export interface Hsl {
  h: number;
  s: number;
  l: number;
}

export function rgbToHsl({ r, g, b }: Rgb): Hsl {
  const rr = r / 255;
  const gg = g / 255;
  const bb = b / 255;
  const max = Math.max(rr, gg, bb);
  const min = Math.min(rr, gg, bb);
  const l = (max + min) / 2;
  let h = 0;
  let s = 0;
  const d = max - min;
  if (d !== 0) {
    s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
    if (max === rr) h = ((gg - bb) / d + (gg < bb ? 6 : 0)) * 60;
    else if (max === gg) h = ((bb - rr) / d + 2) * 60;
    else h = ((rr - gg) / d + 4) * 60;
  }
  return { h: Math.round(h) % 360, s: Math.round(s * 100), l: Math.round(l * 100) };
}

export function hslToRgb({ h, s, l }: Hsl): Rgb {
  const ss = s / 100;
  const ll = l / 100;
  const k = (n: number) => (n + h / 30) % 12;
  const a = ss * Math.min(ll, 1 - ll);
  const f = (n: number) => ll - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return { r: Math.round(f(0) * 255), g: Math.round(f(8) * 255), b: Math.round(f(4) * 255) };
}

const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;
const BARE_HEX = /^([0-9a-f]{3}|[0-9a-f]{6})$/i;
const N = '(\\d{1,3}(?:\\.\\d+)?)';
const SEP = '\\s*[,\\s]\\s*';
const ALPHA = '(?:\\s*[,/]\\s*[\\d.]+%?)?';
const RGB = new RegExp(`^rgba?\\s*\\(\\s*${N}${SEP}${N}${SEP}${N}${ALPHA}\\s*\\)$`, 'i');
const RGB_LOOSE = new RegExp(`^rgba?\\s+${N}${SEP}${N}${SEP}${N}$`, 'i');
const HSL = new RegExp(`^hsla?\\s*\\(\\s*${N}(?:deg|°)?${SEP}${N}%?${SEP}${N}%?${ALPHA}\\s*\\)$`, 'i');
const HSL_LOOSE = new RegExp(`^hsla?\\s+${N}(?:deg|°)?${SEP}${N}%?${SEP}${N}%?$`, 'i');

function fromHex(hex: string): Rgb {
  const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
  const n = Number.parseInt(full, 16);
  return { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255 };
}

type Parsed = { rgb: Rgb; hsl?: Hsl };

/**
 * The colour written in `core`; bare hex digits and names only when `loose`
 * (a colour word was present), and bare hex digits not when `noBareHex`
 * ("255 to hex" asks for a number base, not a colour).
 */
export function parseColor(core: string, loose: boolean, noBareHex = false): Parsed | null {
  const s = core.trim();
  let m = HEX.exec(s);
  if (m) return { rgb: fromHex(m[1]!) };
  m = RGB.exec(s) ?? RGB_LOOSE.exec(s);
  if (m) {
    const [r, g, b] = [m[1], m[2], m[3]].map(Number) as [number, number, number];
    if ([r, g, b].some((v) => v > 255)) return null;
    return { rgb: { r: Math.round(r), g: Math.round(g), b: Math.round(b) } };
  }
  m = HSL.exec(s) ?? HSL_LOOSE.exec(s);
  if (m) {
    const [h, sat, l] = [m[1], m[2], m[3]].map(Number) as [number, number, number];
    if (h > 360 || sat > 100 || l > 100) return null;
    const hsl = { h: Math.round(h) % 360, s: Math.round(sat), l: Math.round(l) };
    return { rgb: hslToRgb({ h, s: sat, l }), hsl };
  }
  if (!loose) return null;
  m = noBareHex ? null : BARE_HEX.exec(s);
  if (m) return { rgb: fromHex(m[1]!) };
  const named = CSS_COLORS.get(s.toLowerCase().replace(/[\s-]+/g, ''));
  if (named) return { rgb: { r: named[0], g: named[1], b: named[2] } };
  return null;
}

export function describeColor(parsed: Parsed): Record<string, unknown> {
  const { r, g, b } = parsed.rgb;
  const { h, s, l } = parsed.hsl ?? rgbToHsl(parsed.rgb);
  const hex = `#${[r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('')}`.toUpperCase();
  return { hex, rgb: `rgb(${r}, ${g}, ${b})`, hsl: `hsl(${h}, ${s}%, ${l}%)`, r, g, b, h, s, l };
}

const C = Object.values(COLOR_VOCABULARY);
const afterPrefix = prefixMatcher(C.flatMap((v) => v.prefixes));
const beforeSuffix = suffixMatcher(C.flatMap((v) => v.suffixes));

export const colorHandler: InstantHandler = {
  type: 'color',
  async answer(ctx) {
    const strict = parseColor(ctx.q, false);
    if (strict) return describeColor(strict);
    let core = ctx.text;
    let worded = false;
    const p = afterPrefix(core);
    if (p !== null) {
      core = p;
      worded = true;
    }
    const s = beforeSuffix(core);
    if (s !== null) {
      core = s;
      worded = true;
    }
    if (!worded) return null;
    const words = ctx.text.replace(core, ' ');
    const parsed = parseColor(core, true, /hex/.test(words) && !/colou?r/.test(words));
    return parsed ? describeColor(parsed) : null;
  },
};
