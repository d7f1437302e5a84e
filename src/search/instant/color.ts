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
const CSS_COLORS: Record<string, string> = Object.fromEntries(
  (
    'aliceblue:f0f8ff antiquewhite:faebd7 aqua:00ffff aquamarine:7fffd4 azure:f0ffff beige:f5f5dc bisque:ffe4c4 ' +
    'black:000000 blanchedalmond:ffebcd blue:0000ff blueviolet:8a2be2 brown:a52a2a burlywood:deb887 cadetblue:5f9ea0 ' +
    'chartreuse:7fff00 chocolate:d2691e coral:ff7f50 cornflowerblue:6495ed cornsilk:fff8dc crimson:dc143c cyan:00ffff ' +
    'darkblue:00008b darkcyan:008b8b darkgoldenrod:b8860b darkgray:a9a9a9 darkgreen:006400 darkgrey:a9a9a9 ' +
    'darkkhaki:bdb76b darkmagenta:8b008b darkolivegreen:556b2f darkorange:ff8c00 darkorchid:9932cc darkred:8b0000 ' +
    'darksalmon:e9967a darkseagreen:8fbc8f darkslateblue:483d8b darkslategray:2f4f4f darkslategrey:2f4f4f ' +
    'darkturquoise:00ced1 darkviolet:9400d3 deeppink:ff1493 deepskyblue:00bfff dimgray:696969 dimgrey:696969 ' +
    'dodgerblue:1e90ff firebrick:b22222 floralwhite:fffaf0 forestgreen:228b22 fuchsia:ff00ff gainsboro:dcdcdc ' +
    'ghostwhite:f8f8ff gold:ffd700 goldenrod:daa520 gray:808080 green:008000 greenyellow:adff2f grey:808080 ' +
    'honeydew:f0fff0 hotpink:ff69b4 indianred:cd5c5c indigo:4b0082 ivory:fffff0 khaki:f0e68c lavender:e6e6fa ' +
    'lavenderblush:fff0f5 lawngreen:7cfc00 lemonchiffon:fffacd lightblue:add8e6 lightcoral:f08080 lightcyan:e0ffff ' +
    'lightgoldenrodyellow:fafad2 lightgray:d3d3d3 lightgreen:90ee90 lightgrey:d3d3d3 lightpink:ffb6c1 ' +
    'lightsalmon:ffa07a lightseagreen:20b2aa lightskyblue:87cefa lightslategray:778899 lightslategrey:778899 ' +
    'lightsteelblue:b0c4de lightyellow:ffffe0 lime:00ff00 limegreen:32cd32 linen:faf0e6 magenta:ff00ff maroon:800000 ' +
    'mediumaquamarine:66cdaa mediumblue:0000cd mediumorchid:ba55d3 mediumpurple:9370db mediumseagreen:3cb371 ' +
    'mediumslateblue:7b68ee mediumspringgreen:00fa9a mediumturquoise:48d1cc mediumvioletred:c71585 ' +
    'midnightblue:191970 mintcream:f5fffa mistyrose:ffe4e1 moccasin:ffe4b5 navajowhite:ffdead navy:000080 ' +
    'oldlace:fdf5e6 olive:808000 olivedrab:6b8e23 orange:ffa500 orangered:ff4500 orchid:da70d6 palegoldenrod:eee8aa ' +
    'palegreen:98fb98 paleturquoise:afeeee palevioletred:db7093 papayawhip:ffefd5 peachpuff:ffdab9 peru:cd853f ' +
    'pink:ffc0cb plum:dda0dd powderblue:b0e0e6 purple:800080 rebeccapurple:663399 red:ff0000 rosybrown:bc8f8f ' +
    'royalblue:4169e1 saddlebrown:8b4513 salmon:fa8072 sandybrown:f4a460 seagreen:2e8b57 seashell:fff5ee ' +
    'sienna:a0522d silver:c0c0c0 skyblue:87ceeb slateblue:6a5acd slategray:708090 slategrey:708090 snow:fffafa ' +
    'springgreen:00ff7f steelblue:4682b4 tan:d2b48c teal:008080 thistle:d8bfd8 tomato:ff6347 turquoise:40e0d0 ' +
    'violet:ee82ee wheat:f5deb3 white:ffffff whitesmoke:f5f5f5 yellow:ffff00 yellowgreen:9acd32'
  )
    .split(' ')
    .map((pair) => pair.split(':') as [string, string]),
);

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
  // Each written form starts with its own character (`#`, `r` or `R`, `h` or `H`): the regular
  // expressions of the others are not run, as every query reaches this handler and most are no colour.
  const first = s.charCodeAt(0) | 0x20;
  let m = first === 0x23 /* # */ ? HEX.exec(s) : null;
  if (m) return { rgb: fromHex(m[1]!) };
  m = first === 0x72 /* r */ ? (RGB.exec(s) ?? RGB_LOOSE.exec(s)) : null;
  if (m) {
    const [r, g, b] = [m[1], m[2], m[3]].map(Number) as [number, number, number];
    if ([r, g, b].some((v) => v > 255)) return null;
    return { rgb: { r: Math.round(r), g: Math.round(g), b: Math.round(b) } };
  }
  m = first === 0x68 /* h */ ? (HSL.exec(s) ?? HSL_LOOSE.exec(s)) : null;
  if (m) {
    const [h, sat, l] = [m[1], m[2], m[3]].map(Number) as [number, number, number];
    if (h > 360 || sat > 100 || l > 100) return null;
    const hsl = { h: Math.round(h) % 360, s: Math.round(sat), l: Math.round(l) };
    return { rgb: hslToRgb({ h, s: sat, l }), hsl };
  }
  if (!loose) return null;
  m = noBareHex ? null : BARE_HEX.exec(s);
  if (m) return { rgb: fromHex(m[1]!) };
  const named = CSS_COLORS[s.toLowerCase().replace(/[\s-]+/g, '')];
  if (named) return { rgb: fromHex(named) };
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
  answer(ctx) {
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
