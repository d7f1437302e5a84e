import { z } from 'zod';
import type { BoundingBox, PlaceFacts } from '../../contracts/place.js';
import { text } from '../tolerant.js';

/*
 * One Nominatim place (format=jsonv2, the shape of both /search items and
 * the /reverse answer) as PlaceFacts. Tolerant: `lat`, `lon`, `importance`
 * and `boundingbox` entries may be strings (they are) or numbers; `class`
 * (format=json) stands in for `category`; a place without usable
 * coordinates is dropped (null).
 */

/** A JSON number, or a string holding one; NaN otherwise. */
function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') return Number(v);
  return Number.NaN;
}

const item = z.object({
  name: text,
  display_name: text,
  lat: z.unknown().optional(),
  lon: z.unknown().optional(),
  category: text,
  class: text,
  type: text,
  addresstype: text,
  importance: z.unknown().optional(),
  boundingbox: z.unknown().optional(),
});

function boundingBox(v: unknown): BoundingBox | null {
  if (!Array.isArray(v) || v.length !== 4) return null;
  const box = v.map(toNumber);
  return box.every(Number.isFinite) ? (box as unknown as BoundingBox) : null;
}

/** The facts of one jsonv2 place, or null when it is not an object with finite, in-range coordinates. */
export function nominatimPlaceFacts(json: unknown): PlaceFacts | null {
  const parsed = item.safeParse(json);
  if (!parsed.success) return null;
  const p = parsed.data;
  const lat = toNumber(p.lat);
  const lon = toNumber(p.lon);
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
  const importance = toNumber(p.importance);
  return {
    name: p.name.trim(),
    display_name: p.display_name,
    lat,
    lon,
    category: p.category || p.class,
    type: p.type,
    addresstype: p.addresstype,
    importance: Number.isFinite(importance) ? importance : 0,
    boundingbox: boundingBox(p.boundingbox),
  };
}
