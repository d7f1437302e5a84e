import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { TvdbCard, TvdbCastMember, TvdbCrewMember, TvdbHit } from '../../contracts/cards.js';
import { body, list, nested, rawList, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { THETVDB } from './slug.js';

/*
 * TheTVDB v4 (provider_10), base THETVDB_BASE_URL (…/v4):
 *
 * 1. POST /login {"apikey": THETVDB_API_KEY, "pin": THETVDB_PIN if set}
 *    -> data.token, a bearer token valid about a month (kept 25 days;
 *    a 401 on a later call means it was revoked: log in again once).
 * 2. GET /search?query=<title>&limit=20 (Authorization: Bearer <token>)
 *    -> data[]: tvdb_id, type (series|movie|person|company…), name, slug,
 *    translations {lang3: name}, aliases[].
 * 3. GET /{movies|series}/{tvdb_id}/extended?meta=translations
 *    -> data: name, slug, year, firstAired / first_release.date, overview,
 *    image (poster), artworks[] {type, image} (3 = series background,
 *    15 = movie background), genres[].name, status.name,
 *    characters[] {peopleType, personName, name (the role), personImgURL,
 *    image, sort}, translations.nameTranslations[] {language, name} and
 *    overviewTranslations[] {language, overview, tagline}.
 * Card: title/overview/tagline in the request language (3-letter code),
 * falling back to English, then the record's own; url
 * https://thetvdb.com/{movies|series}/{slug}.
 *
 * Sources: TheTVDB API v4 reference (its Swagger document: /login, /search,
 * /movies|series/{id}/extended) and TheTVDB's own v4 clients.
 */

export const THETVDB_SEARCH_LIMIT = 20;
export const THETVDB_SITE = 'https://thetvdb.com';
const MAX_GENRES = 3;
const MAX_CAST = 8;
const MAX_CREW = 4;
/** Artwork types of a full-width background: series (3) and movie (15). */
const BACKGROUND_TYPES = new Set([3, 15]);
/** Crew roles shown, in priority order. */
const CREW_ROLES = ['Creator', 'Showrunner', 'Director', 'Writer'] as const;

/** `lang` (2 letters) -> TheTVDB's 3-letter language codes. */
const LANG3: Readonly<Record<string, string>> = {
  en: 'eng',
  fr: 'fra',
  de: 'deu',
  es: 'spa',
  it: 'ita',
  pt: 'por',
  nl: 'nld',
  sv: 'swe',
  da: 'dan',
  no: 'nor',
  fi: 'fin',
  pl: 'pol',
  ru: 'rus',
  ja: 'jpn',
  ko: 'kor',
  zh: 'zho',
  tr: 'tur',
  cs: 'ces',
  hu: 'hun',
  el: 'ell',
  he: 'heb',
  ar: 'ara',
};

export function tvdbLanguage(lang: string): string {
  return (Object.hasOwn(LANG3, lang) ? LANG3[lang] : undefined) ?? 'eng';
}

export type TvdbConfig = Pick<Config, 'THETVDB_BASE_URL' | 'THETVDB_API_KEY' | 'THETVDB_PIN'>;

export type TvdbCollection = 'movies' | 'series';

const loginSchema = body({ data: nested({ token: text }) });

export function thetvdbLoginCall(config: TvdbConfig): ProviderCall<string> {
  const payload: Record<string, string> = { apikey: config.THETVDB_API_KEY };
  if (config.THETVDB_PIN) payload.pin = config.THETVDB_PIN;
  return {
    provider: THETVDB,
    request: {
      method: 'POST',
      url: `${config.THETVDB_BASE_URL}/login`,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(payload),
    },
    parse(json) {
      const token = loginSchema.parse(json).data.token;
      if (!token) throw new Error('login answered without a token');
      return token;
    },
    cacheTtlMs: 0,
  };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const hitSchema = z.object({
  tvdb_id: text,
  type: text,
  name: text,
  slug: text,
  translations: z.unknown().optional(),
  aliases: rawList,
});

function stringsOf(values: unknown): string[] {
  const out: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string' && v.trim()) out.push(v.trim());
    else if (v !== null && typeof v === 'object' && 'name' in v && typeof v.name === 'string' && v.name.trim()) {
      out.push(v.name.trim());
    }
  };
  if (Array.isArray(values)) values.forEach(add);
  else if (values !== null && typeof values === 'object') Object.values(values).forEach(add);
  return out;
}

const searchSchema = body({ data: list(hitSchema) });

/** Film and series hits only (the index also holds people and companies), in the API's order. */
export function parseTvdbSearch(json: unknown): TvdbHit[] {
  const hits: TvdbHit[] = [];
  for (const h of searchSchema.parse(json).data) {
    if ((h.type !== 'movie' && h.type !== 'series') || !/^\d+$/.test(h.tvdb_id)) continue;
    hits.push({
      tvdb_id: h.tvdb_id,
      type: h.type,
      name: h.name,
      slug: h.slug,
      otherNames: [...stringsOf(h.translations), ...stringsOf(h.aliases).slice(0, 8)],
    });
  }
  return hits;
}

export function thetvdbSearchCall(query: string, token: string, config: TvdbConfig): ProviderCall<TvdbHit[]> {
  const params = new URLSearchParams({ query, limit: String(THETVDB_SEARCH_LIMIT) });
  return {
    provider: THETVDB,
    request: { url: `${config.THETVDB_BASE_URL}/search?${params}`, headers: bearer(token) },
    parse: parseTvdbSearch,
    cacheTtlMs: 0,
  };
}

const translation = z.object({ language: text, name: text, overview: text, tagline: text });
const character = z.object({
  peopleType: text,
  personName: text,
  name: text,
  personImgURL: text,
  image: text,
  sort: z.unknown().optional(),
});

const extendedSchema = body({
  data: nested({
    name: text,
    slug: text,
    year: text,
    firstAired: text,
    first_release: nested({ date: text }),
    overview: text,
    image: text,
    artworks: list(z.object({ type: z.unknown().optional(), image: text })),
    genres: list(z.object({ name: text })),
    status: nested({ name: text }),
    characters: list(character),
    translations: nested({ nameTranslations: list(translation), overviewTranslations: list(translation) }),
  }),
});

type Translation = z.output<typeof translation>;

function pick(records: Translation[], lang3: string): Translation | undefined {
  return records.find((t) => t.language === lang3) ?? records.find((t) => t.language === 'eng');
}

const sortOf = (c: { sort?: unknown }) => (typeof c.sort === 'number' && c.sort > 0 ? c.sort : 999);

/** The card of an extended record. `fallbackSlug`: the search hit's, when the record has none. */
export function parseTvdbExtended(
  json: unknown,
  mediaType: 'movie' | 'series',
  lang3: string,
  fallbackSlug: string,
): TvdbCard {
  const d = extendedSchema.parse(json).data;
  const nameTr = pick(d.translations.nameTranslations, lang3);
  const overviewTr = pick(d.translations.overviewTranslations, lang3);
  const year = d.year || (d.firstAired || d.first_release.date).slice(0, 4);
  const backdrop =
    d.artworks.find((a) => typeof a.type === 'number' && BACKGROUND_TYPES.has(a.type) && a.image)?.image ?? '';

  const cast: TvdbCastMember[] = d.characters
    .filter((c) => c.peopleType === 'Actor' && c.personName)
    .sort((a, b) => sortOf(a) - sortOf(b))
    .slice(0, MAX_CAST)
    .map((c) => ({ name: c.personName, character: c.name, profile: c.personImgURL || c.image }));

  const crew: TvdbCrewMember[] = [];
  const seen = new Set<string>();
  for (const role of CREW_ROLES) {
    for (const c of d.characters) {
      if (crew.length >= MAX_CREW) break;
      if (c.peopleType !== role || !c.personName || seen.has(c.personName)) continue;
      seen.add(c.personName);
      crew.push({ name: c.personName, job: role, profile: c.personImgURL || c.image });
    }
  }

  const collection: TvdbCollection = mediaType === 'movie' ? 'movies' : 'series';
  return {
    title: nameTr?.name || d.name,
    year,
    media_type: mediaType,
    overview: overviewTr?.overview || d.overview,
    poster: d.image,
    backdrop,
    genres: d.genres
      .map((g) => g.name)
      .filter(Boolean)
      .slice(0, MAX_GENRES),
    tagline: overviewTr?.tagline ?? '',
    status: d.status.name,
    cast,
    crew,
    url: `${THETVDB_SITE}/${collection}/${d.slug || fallbackSlug}`,
  };
}

export function thetvdbExtendedCall(
  hit: Pick<TvdbHit, 'tvdb_id' | 'type' | 'slug'>,
  lang3: string,
  token: string,
  config: TvdbConfig,
): ProviderCall<TvdbCard> {
  const mediaType = hit.type === 'movie' ? 'movie' : 'series';
  const collection: TvdbCollection = mediaType === 'movie' ? 'movies' : 'series';
  return {
    provider: THETVDB,
    request: {
      url: `${config.THETVDB_BASE_URL}/${collection}/${encodeURIComponent(hit.tvdb_id)}/extended?meta=translations`,
      headers: bearer(token),
    },
    parse: (json) => parseTvdbExtended(json, mediaType, lang3, hit.slug),
    cacheTtlMs: 0,
  };
}
