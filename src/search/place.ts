import type { BoundingBox, Place, PlaceFacts } from '../contracts/place.js';

/*
 * A place as a client receives it (contracts/place.ts), built from what an
 * adapter knows about it, with the reference's URL recipes (reference
 * section 5, `maps/`): the maps endpoint's places and the cards endpoint's
 * map quick answer.
 *
 * Numbers inside the URLs are rendered as the original's Python renders a
 * float (`repr`): `2.0`, `48.8584`, `5e-05` (the reference says to keep that
 * in a port: clients may compare the URLs as strings).
 */

const OSM = 'https://www.openstreetmap.org';
/** Half the side of the embedded map's square when a place has no usable bounding box, degrees. */
export const EMBED_SQUARE = 0.003;
/** The same for the smaller embedded map. */
export const MINI_EMBED_SQUARE = 0.008;
/** A bounding box narrower or lower than this (degrees) is degenerate. */
const MIN_SPAN = 1e-4;

/** `x` rounded to 6 decimal places (never -0). */
export function round6(x: number): number {
  const r = Number(x.toFixed(6));
  return r === 0 ? 0 : r;
}

/**
 * Python's `repr()` of a float: the shortest digits that read back as the
 * same number (as JavaScript's), written in fixed notation with at least one
 * decimal (`2.0`, `0.0001`) when the decimal exponent is from -4 to 15, else
 * in scientific notation with a signed exponent of at least two digits
 * (`5e-05`, `1.5e+16`).
 */
export function pythonFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const sign = n < 0 ? '-' : '';
  // toExponential() without a precision gives the shortest round-trip digits: d.ddde±x.
  const [mantissa, exp] = Math.abs(n).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exponent = Number(exp);
  if (exponent < -4 || exponent >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exponent).toString().padStart(2, '0');
    return `${sign}${m}e${exponent < 0 ? '-' : '+'}${e}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1) || '0';
  return `${sign}${whole}.${fraction}`;
}

/** Lone UTF-16 surrogates, which cannot be percent-encoded. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Percent-encoding of the `geo:` label as the original's `urllib.parse.quote`
 * does it: everything but letters, digits, `_.-~` and `/` is encoded (UTF-8).
 */
export function quoteLabel(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD'))
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/g, '/');
}

function usableBox(box: BoundingBox | null): BoundingBox | null {
  if (box === null) return null;
  const [south, north, west, east] = box;
  if (![south, north, west, east].every(Number.isFinite)) return null;
  if (north - south < MIN_SPAN || east - west < MIN_SPAN) return null;
  return box;
}

/** The OpenStreetMap embed URL of a box ([south, north, west, east]) with a marker. */
function embedUrl(box: BoundingBox, lat: string, lon: string): string {
  const [south, north, west, east] = box.map(pythonFloat) as [string, string, string, string];
  return `${OSM}/export/embed.html?bbox=${west}%2C${south}%2C${east}%2C${north}&layer=mapnik&marker=${lat}%2C${lon}`;
}

/** A square of ±`half` degrees around the point (rounded to 6 places). */
function square(lat: number, lon: number, half: number): BoundingBox {
  return [round6(lat - half), round6(lat + half), round6(lon - half), round6(lon + half)];
}

/** The place a client receives, with its URLs (reference section 5, `maps/`). */
export function buildPlace(facts: PlaceFacts): Place {
  const lat = round6(facts.lat);
  const lon = round6(facts.lon);
  const name = facts.name || (facts.display_name.split(',', 1)[0] ?? '').trim();
  const la = pythonFloat(lat);
  const lo = pythonFloat(lon);
  const box = usableBox(facts.boundingbox);
  return {
    name,
    display_name: facts.display_name,
    lat,
    lon,
    category: facts.category,
    type: facts.type,
    addresstype: facts.addresstype,
    importance: Number.isFinite(facts.importance) ? facts.importance : 0,
    embed_url: embedUrl(box ?? square(lat, lon, EMBED_SQUARE), la, lo),
    mini_embed_url: embedUrl(box ?? square(lat, lon, MINI_EMBED_SQUARE), la, lo),
    osm_url: `${OSM}/?mlat=${la}&mlon=${lo}#map=16/${la}/${lo}`,
    directions_url: `${OSM}/directions?to=${la}%2C${lo}`,
    geo_uri: `geo:${la},${lo}?q=${la},${lo}${name ? `(${quoteLabel(name)})` : ''}`,
  };
}

/** A place known only by its coordinates (reverse geocoding without an answer), named `name`. */
export function coordinatePlace(lat: number, lon: number, name: string): Place {
  return buildPlace({
    name,
    display_name: name,
    lat,
    lon,
    category: '',
    type: '',
    addresstype: '',
    importance: 0,
    boundingbox: null,
  });
}
