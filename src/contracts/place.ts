/*
 * The place of the maps response (spec 2.6), shared by the maps endpoint and
 * the cards endpoint's map quick answer: what an adapter knows about a place
 * (PlaceFacts) and the place a client receives (Place). How the one becomes
 * the other, with the reference's URL recipes, is search/place.ts.
 */

/** The fields a place has before and after it is shaped (Nominatim's). */
interface PlaceFields {
  /** The place's name (before shaping "" when it has none: the first part of display_name is used). */
  name: string;
  /** The full comma-separated name. */
  display_name: string;
  /** Latitude (in a Place rounded to 6 decimal places). */
  lat: number;
  /** Longitude (in a Place rounded to 6 decimal places). */
  lon: number;
  category: string;
  type: string;
  addresstype: string;
  importance: number;
}

/** One place of the maps response: every field always present. */
export interface Place extends PlaceFields {
  embed_url: string;
  mini_embed_url: string;
  osm_url: string;
  directions_url: string;
  geo_uri: string;
}

/** A bounding box as Nominatim gives it: [south, north, west, east]. */
export type BoundingBox = readonly [south: number, north: number, west: number, east: number];

/** What is known about a place before it is shaped (a parsed Nominatim answer, or bare coordinates). */
export interface PlaceFacts extends PlaceFields {
  /** null when absent or invalid: a square around the point is used. */
  boundingbox: BoundingBox | null;
}
