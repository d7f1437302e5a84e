import { z } from 'zod';
import type {
  RatingBubble,
  StackExchangeAnswer,
  StackExchangeCard,
  TripadvisorCard,
  TvdbCard,
  TvdbCastMember,
  TvdbCrewMember,
  WikipediaCard,
} from '../contracts/cards.js';
import type { ContentsReason } from '../contents/fetch/reasons.js';
import type { ContentsFailureEntry, ContentsPage } from '../contents/page.js';
import type { Place } from '../contracts/place.js';
import type { ImageResult, NewsResult, VideoResult } from '../contracts/search.js';
import type { Language } from '../providers/libretranslate/languages.js';
import { GROUPS, PROVIDER_SLUGS } from '../providers/registry.js';
import type { FailureReason, Unresponsive } from '../providers/types.js';
import type { CardsResponse, MapAnswer } from './cards/index.js';
import type { InstantResponse } from './instant/index.js';
import { HANDLERS } from './instant/registry.js';
import type { InstantAnswer } from './instant/types.js';
import type { MapsResponse } from './maps.js';
import type { MediaResponse } from './media.js';
import type { WebResult } from './merge.js';
import type { SearchOutcome } from './outcome.js';
import { ENGINE_SLUGS } from './queries.js';
import type { SimilarImagesResponse } from './similar-images.js';
import type { SuggestResponse } from './suggest.js';
import type { LanguagesResponse, TranslateResponse } from './translate.js';
import type { WebResponse } from './web.js';

/*
 * The 200 bodies of the search endpoints (and the 502 of the provider-backed
 * ones) and of the provider status as zod schemas: the OpenAPI document at
 * /api/v1/schema/ is generated from them (routes/api/openapi.ts), and MCP's
 * tools take them as output schemas. Each is checked at compile time against
 * the TypeScript type the feature module really answers (the `_Checks` tuple
 * at the end), so a field added to a response type without its schema (or
 * the other way round) fails type-checking.
 *
 * Instant answers and the provider cards are provider-shaped: their fixed
 * fields are described, and further properties are allowed.
 */

const text = (description: string) => z.string().meta({ description });

/** Any provider slug (unresponsive providers may be media, maps or card providers too). */
const providerSlugSchema = z.enum(PROVIDER_SLUGS);
/** The slugs of the web engines (the `engine` parameter's values). */
const engineSlugSchema = z.enum(ENGINE_SLUGS);

const FAILURE_REASONS = [
  'timeout',
  'error',
  'unreachable',
  'rate_limited',
  'unavailable',
  'budget_exhausted',
] as const satisfies readonly FailureReason[];

export const unresponsiveSchema = z
  .object({
    engine: providerSlugSchema.meta({ description: 'The provider asked.' }),
    reason: z.enum(FAILURE_REASONS).meta({
      description:
        'timeout: no answer in time; error: a failed answer; unreachable: no answer at all (its host name did not resolve, the connection was refused or reset); rate_limited: the provider refused for its own limits, or had no free slot under its pacing in time; unavailable: not asked, suspended while it keeps failing; budget_exhausted: its budget of calls for this period is spent.',
    }),
  })
  .meta({ description: 'A provider asked for this request that failed or timed out.' });

const unresponsiveList = z
  .array(unresponsiveSchema)
  .meta({ description: 'Providers asked that failed or timed out (empty results with none here: nothing matched).' });
const engineList = z.array(engineSlugSchema).meta({ description: 'The engines in the requested scope.' });
const pageField = z.number().int().meta({ description: 'Page number (1 to 50).' });

// --- web -------------------------------------------------------------------

export const webResultSchema = z.object({
  title: z.string(),
  url: text('Result URL.'),
  description: text('Snippet, with the query terms highlighted.'),
  display_url: text('Shortened host form of the URL.'),
  favicon_url: z.string(),
  age: text('Human-readable relative age, or "".'),
  published: text(
    'When it was published, as the upstream dates it: ISO 8601 UTC (`2024-03-03T10:12:00Z`), or "" when the upstream gives no date.',
  ),
  sitelinks: z.array(z.unknown()),
  source: text('The engine that returned it, `both` for two engines, `all` for three or more.'),
  source_label: text('Display names of the contributing engines (provider_01 left out), joined with " · ".'),
});

// --- page contents -------------------------------------------------------------

const CONTENTS_REASONS = [
  'invalid_url',
  'blocked_address',
  'timeout',
  'unreachable',
  'http_status',
  'too_large',
  'unsupported_type',
  'robots_disallowed',
  'too_many_redirects',
  'no_content',
] as const satisfies readonly ContentsReason[];

const contentsReasonSchema = z.enum(CONTENTS_REASONS).meta({
  description:
    "Why the page was not read. The caller's URL: invalid_url (not an absolute http/https URL, credentials in it, over 2,048 characters), blocked_address (a loopback, private, link-local, CGNAT, multicast, reserved or metadata address). The site's: timeout, unreachable, http_status (with `status`), too_large, unsupported_type, robots_disallowed, too_many_redirects, no_content (nothing readable found).",
});

const contentsPageFields = {
  final_url: text('The URL after redirects.'),
  canonical_url: text('The page\'s `<link rel="canonical">`, absolute, or "".'),
  title: z.string(),
  byline: text('The author(s), or "".'),
  site_name: text('The site\'s name, or "".'),
  published: text('When the page was published (ISO 8601), or "".'),
  language: text('The page\'s language (BCP 47), or "".'),
  excerpt: text('A short summary or the first sentences, or "".'),
  content_type: text('The MIME type read: text/html, application/xhtml+xml, text/plain or application/pdf.'),
  format: z.enum(['markdown', 'text']),
  content: text(
    'The main content only (no navigation, banners, share buttons, related lists, comments or footers): GitHub-flavoured markdown with absolute links, or plain text with paragraphs separated by blank lines.',
  ),
  length: z.number().int().meta({ description: "The whole content's length in characters." }),
  truncated: z
    .boolean()
    .meta({ description: '`max_chars` cut the content (at a paragraph or sentence boundary where one is near).' }),
  fetched_at: text('When the page was fetched (ISO 8601 UTC).'),
  cached: z
    .boolean()
    .meta({ description: 'Answered from the cache (a read of the same page within CONTENTS_CACHE_SECONDS).' }),
};

export const contentsPageSchema = z.object({ url: text('The URL as asked.'), ...contentsPageFields });

export const contentsFailureSchema = z.object({
  url: text('The URL as asked.'),
  reason: contentsReasonSchema,
  detail: z.string(),
  status: z.number().int().optional().meta({ description: "The site's HTTP status, for http_status." }),
});

export const contentsSiteFailureSchema = z.object({
  detail: z.string(),
  reason: contentsReasonSchema,
  status: z.number().int().optional().meta({ description: "The site's HTTP status, for http_status." }),
});

export const contentsBatchResponseSchema = z.object({
  results: z.array(contentsPageSchema).meta({ description: 'The pages read, in the order asked.' }),
  failed: z.array(contentsFailureSchema).meta({ description: 'The pages not read, in the order asked.' }),
});

export const contentsErrorSchema = z
  .object({ reason: contentsReasonSchema, detail: z.string(), status: z.number().int().optional() })
  .meta({ description: 'Why the page of this result was not read.' });

export const webSearchResultSchema = webResultSchema.extend({
  contents: z.object(contentsPageFields).optional().meta({
    description:
      'With `contents=n`, for the first n results: the page read, as GET /api/v1/contents/ answers it without `url`.',
  }),
  contents_error: contentsErrorSchema.optional(),
});

export const webResponseSchema = z.object({
  query: text('The query used.'),
  tab: z.literal('web'),
  page: pageField,
  engine: engineList,
  correction: text('Suggested spelling correction, or "".'),
  results: z.array(webSearchResultSchema),
  unresponsive: unresponsiveList,
});

// --- images, news, videos ----------------------------------------------------

export const imageResultSchema = z.object({
  title: z.string(),
  url: text('The page the image is on.'),
  source: text('Host name of that page.'),
  thumbnail: text('Thumbnail URL.'),
});

export const newsResultSchema = z.object({
  title: z.string(),
  url: z.string(),
  description: z.string(),
  age: text('Relative age.'),
  published: text(
    'When it was published, as the upstream dates it: ISO 8601 UTC (`2024-03-03T10:12:00Z`), or "" when the upstream gives no date.',
  ),
  source: text('Publisher name.'),
  hostname: z.string(),
  thumbnail: text('Thumbnail URL, or "".'),
});

export const videoResultSchema = z.object({
  title: z.string(),
  url: z.string(),
  age: text('Relative age.'),
  published: text(
    'When it was published, as the upstream dates it: ISO 8601 UTC (`2024-03-03T10:12:00Z`), or "" when the upstream gives no date.',
  ),
  source: z.string(),
  duration: text('minutes:seconds, or "".'),
  hostname: z.string(),
  thumbnail: text('Thumbnail URL, or "".'),
  embed_url: text('The video\'s player page, for an iframe (the platform\'s embed URL), or "".'),
});

function mediaResponse<T extends 'images' | 'news' | 'videos', R extends z.ZodType>(tab: T, result: R) {
  return z.object({
    query: text('The query used.'),
    tab: z.literal(tab),
    page: pageField,
    engine: engineList,
    results: z.array(result),
    unresponsive: unresponsiveList,
  });
}

export const imagesResponseSchema = mediaResponse('images', imageResultSchema);
export const newsResponseSchema = mediaResponse('news', newsResultSchema);
export const videosResponseSchema = mediaResponse('videos', videoResultSchema);

export const similarImagesResponseSchema = z.object({
  query: text('The seed actually searched (the cleaned caption, else the page query).'),
  engine: engineList,
  results: z.array(imageResultSchema),
  unresponsive: unresponsiveList,
});

// --- maps --------------------------------------------------------------------

export const placeSchema = z.object({
  name: z.string(),
  display_name: text('The full comma-separated name.'),
  lat: z.number().meta({ description: 'Latitude, rounded to 6 decimal places.' }),
  lon: z.number().meta({ description: 'Longitude, rounded to 6 decimal places.' }),
  category: z.string(),
  type: z.string(),
  addresstype: z.string(),
  importance: z.number(),
  embed_url: text('URL of an embeddable map.'),
  mini_embed_url: text('URL of a smaller embeddable map.'),
  osm_url: text('URL of the place on OpenStreetMap.'),
  directions_url: text('URL of a directions page.'),
  geo_uri: text('geo: URI of the place.'),
});

export const mapsResponseSchema = z.object({
  query: text('The query (geocoding), or "" (reverse geocoding).'),
  places: z.array(placeSchema).meta({ description: 'Reverse geocoding: exactly one place.' }),
});

// --- translation ---------------------------------------------------------------

export const translateResponseSchema = z.object({
  source: text('Source language code used (`auto` when detecting).'),
  target: text('Target language code.'),
  translated_text: z.string(),
  detected_lang: text('The detected language when the source was `auto`; otherwise "".'),
});

export const languageSchema = z.object({ code: z.string(), name: z.string() });

export const languagesResponseSchema = z.object({ languages: z.array(languageSchema) });

// --- suggestions ------------------------------------------------------------------

export const suggestResponseSchema = z.object({
  query: z.string(),
  suggestions: z.array(z.string()),
});

// --- instant answers -----------------------------------------------------------------

const ANSWER_TYPES = HANDLERS.map((h) => h.type);

export const instantAnswerSchema = z
  .looseObject({
    type: z.enum(ANSWER_TYPES).meta({ description: 'The kind of answer; the other fields depend on it.' }),
    query: text('The query the answer is for.'),
  })
  .meta({ description: 'An instant answer: provider-shaped, its fields depend on `type`.' });

export const instantResponseSchema = z.object({
  query: z.string(),
  answer: instantAnswerSchema.nullable().meta({ description: 'null when the query is not answered inline.' }),
});

// --- knowledge cards ---------------------------------------------------------------------

export const wikipediaCardSchema = z
  .looseObject({
    title: z.string(),
    description: z.string(),
    extract: z.string(),
    url: text("The article's desktop URL."),
    thumbnail: text('An image URL, or "".'),
    wikibase_item: text('The Wikidata item id (Q…), or "".'),
  })
  .meta({ description: 'The Wikipedia article the query names.' });

const castMemberSchema = z.looseObject({ name: z.string(), character: z.string(), profile: z.string() });
const crewMemberSchema = z.looseObject({ name: z.string(), job: z.string(), profile: z.string() });

export const tvdbCardSchema = z
  .looseObject({
    title: z.string(),
    year: z.string(),
    media_type: z.enum(['movie', 'series']),
    overview: z.string(),
    poster: z.string(),
    backdrop: z.string(),
    genres: z.array(z.string()),
    tagline: z.string(),
    status: z.string(),
    cast: z.array(castMemberSchema),
    crew: z.array(crewMemberSchema),
    url: z.string(),
  })
  .meta({ description: 'A film or a series (TheTVDB).' });

export const tripadvisorCardSchema = z
  .looseObject({
    name: z.string(),
    geo: text('The town or area the place is in.'),
    address: z.string(),
    rating: z.number().nullable(),
    rating_bubbles: z.array(z.enum(['full', 'half', 'empty'] as const satisfies readonly RatingBubble[])),
    num_reviews: z.number().int(),
    description: z.string(),
    url: z.string(),
    latitude: z.number().nullable(),
    longitude: z.number().nullable(),
  })
  .meta({ description: 'A restaurant, hotel or attraction (Tripadvisor).' });

const stackExchangeAnswerSchema = z.looseObject({
  body: text('Sanitised HTML.'),
  is_long: z.boolean(),
  score: z.number().int(),
  is_accepted: z.boolean(),
  url: z.string(),
});

export const stackExchangeCardSchema = z
  .looseObject({
    title: z.string(),
    url: z.string(),
    site_name: z.string(),
    score: z.number().int(),
    answer_count: z.number().int(),
    view_count: z.number().int(),
    is_answered: z.boolean(),
    tags: z.array(z.string()),
    answer: stackExchangeAnswerSchema.nullable(),
  })
  .meta({ description: 'The best-matching Stack Exchange question and its top answer.' });

export const mapAnswerSchema = z
  .object({ type: z.literal('map'), place: placeSchema, query: z.string() })
  .meta({ description: 'The map quick answer: the first place found for the query.' });

export const cardsResponseSchema = z.object({
  query: z.string(),
  wikipedia: wikipediaCardSchema.nullable(),
  thetvdb: tvdbCardSchema.nullable(),
  tripadvisor: tripadvisorCardSchema.nullable(),
  stackexchange: stackExchangeCardSchema.nullable(),
  map: mapAnswerSchema.nullable(),
  unresponsive: z.array(unresponsiveSchema),
});

// --- errors of the search endpoints ---------------------------------------------------------

export const detailSchema = z.object({ detail: z.string() }).meta({ description: 'An error.' });

export const allFailedSchema = z
  .object({ detail: z.string(), unresponsive: z.array(unresponsiveSchema) })
  .meta({ description: 'Every provider asked failed (never an empty result that reads as "nothing matched").' });

// --- provider status -----------------------------------------------------

/** What paces and budgets a provider (GET /api/v1/status/). */
export const statusLimitsSchema = z.object({
  rate_per_second: z
    .number()
    .nullable()
    .meta({ description: 'Calls a second Sift allows across the deployment; null: no rate.' }),
  concurrency: z.number().int().nullable().meta({ description: 'Calls in flight at once at most; null: no bound.' }),
  budget: z
    .object({
      period: z.enum(['month', 'day']),
      limit: z.number().int(),
      used: z.number().int().meta({ description: 'Calls made this period (UTC), by every instance.' }),
      resets_at: z.string().meta({ description: 'ISO 8601 UTC: when the period ends.' }),
      per_user: z.number().int().nullable().meta({
        description:
          "Calls one user's searches may make of it this period (PROVIDER_LIMITS user_share); null: no share.",
      }),
    })
    .nullable()
    .meta({ description: 'The budget of calls Sift keeps to; null: none.' }),
  upstream: z
    .object({
      limit: z.number().int(),
      remaining: z.number().int(),
      resets_at: z.string().nullable(),
      reported_at: z.string(),
    })
    .nullable()
    .meta({ description: "The upstream's own count for its long window (a month), as its last answer reported it." }),
  terms: z.string().meta({ description: "Where the default terms in force are published ('' when none is)." }),
});

/** The body of GET /api/v1/status/ (spec 2.10). */
export const statusResponseSchema = z.object({
  providers: z.array(
    z.object({
      slug: z.enum(PROVIDER_SLUGS),
      name: z.string().meta({ description: 'Display name.' }),
      group: z.enum(GROUPS.map((g) => g.key)),
      monitor: z.enum(['query', 'probe']).meta({
        description: 'How the state is established: from real searches (`query`) or an active check (`probe`).',
      }),
      state: z.enum(['up', 'down', 'unknown']).meta({ description: '`unknown`: nothing observed yet.' }),
      checked_at: z.string().nullable().meta({ description: 'ISO 8601 UTC; null when never observed.' }),
      last_ok_at: z.string().nullable().meta({ description: 'ISO 8601 UTC of the last success, or null.' }),
      last_error: z.string().meta({ description: 'Upstream error text, may be empty.' }),
      source: z.string().meta({ description: 'Where the last observation came from: `query`, `probe`, or "".' }),
      limits: statusLimitsSchema.optional().meta({
        description:
          'What paces and budgets the provider (docs/configuration.md, Upstream terms); absent when nothing does.',
      }),
    }),
  ),
});

/** Schemas named in the OpenAPI document's components (the rest are inlined where used). */
export const SEARCH_COMPONENT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  Unresponsive: unresponsiveSchema,
  WebResult: webResultSchema,
  ImageResult: imageResultSchema,
  NewsResult: newsResultSchema,
  VideoResult: videoResultSchema,
  Place: placeSchema,
  Language: languageSchema,
  InstantAnswer: instantAnswerSchema,
  WikipediaCard: wikipediaCardSchema,
  TvdbCard: tvdbCardSchema,
  TripadvisorCard: tripadvisorCardSchema,
  StackExchangeCard: stackExchangeCardSchema,
  MapAnswer: mapAnswerSchema,
  WebResponse: webResponseSchema,
  ImagesResponse: imagesResponseSchema,
  SimilarImagesResponse: similarImagesResponseSchema,
  NewsResponse: newsResponseSchema,
  VideosResponse: videosResponseSchema,
  MapsResponse: mapsResponseSchema,
  TranslateResponse: translateResponseSchema,
  LanguagesResponse: languagesResponseSchema,
  SuggestResponse: suggestResponseSchema,
  InstantResponse: instantResponseSchema,
  CardsResponse: cardsResponseSchema,
  Detail: detailSchema,
  AllProvidersFailed: allFailedSchema,
  ContentsPage: contentsPageSchema,
  ContentsFailure: contentsFailureSchema,
  ContentsBatchResponse: contentsBatchResponseSchema,
  ContentsSiteFailure: contentsSiteFailureSchema,
};

// --- compile-time checks: each schema describes exactly the type it documents ------------------

/** A and B are assignable to each other. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** An object type without its index signature (what a loose schema adds). */
export type Known<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
/** A loose (provider-shaped) schema's known fields compared with the interface it describes. */
type Card<S extends z.ZodType, T> = Same<Known<z.output<S>>, T>;
/** Fails type-checking unless T is true. */
export type Check<T extends true> = T;

type AllFailedBody = Extract<SearchOutcome<never>, { status: 502 }>['body'];
type CardsOutput = z.output<typeof cardsResponseSchema>;

export type _Checks = [
  Check<Same<z.output<typeof unresponsiveSchema>, Unresponsive>>,
  Check<Same<z.output<typeof webResultSchema>, WebResult>>,
  Check<Same<z.output<typeof webResponseSchema>, WebResponse>>,
  Check<Same<z.output<typeof imageResultSchema>, ImageResult>>,
  Check<Same<z.output<typeof newsResultSchema>, NewsResult>>,
  Check<Same<z.output<typeof videoResultSchema>, VideoResult>>,
  Check<Same<z.output<typeof imagesResponseSchema>, MediaResponse<'images'>>>,
  Check<Same<z.output<typeof newsResponseSchema>, MediaResponse<'news'>>>,
  Check<Same<z.output<typeof videosResponseSchema>, MediaResponse<'videos'>>>,
  Check<Same<z.output<typeof similarImagesResponseSchema>, SimilarImagesResponse>>,
  Check<Same<z.output<typeof placeSchema>, Place>>,
  Check<Same<z.output<typeof mapsResponseSchema>, MapsResponse>>,
  Check<Same<z.output<typeof translateResponseSchema>, TranslateResponse>>,
  Check<Same<z.output<typeof languageSchema>, Language>>,
  Check<Same<z.output<typeof languagesResponseSchema>, LanguagesResponse>>,
  Check<Same<z.output<typeof suggestResponseSchema>, SuggestResponse>>,
  Check<Same<z.output<typeof instantAnswerSchema>, InstantAnswer>>,
  Check<Same<z.output<typeof instantResponseSchema>, InstantResponse>>,
  Check<Card<typeof wikipediaCardSchema, WikipediaCard>>,
  Check<Card<typeof castMemberSchema, TvdbCastMember>>,
  Check<Card<typeof crewMemberSchema, TvdbCrewMember>>,
  Check<Same<Omit<Known<z.output<typeof tvdbCardSchema>>, 'cast' | 'crew'>, Omit<TvdbCard, 'cast' | 'crew'>>>,
  Check<Card<typeof tripadvisorCardSchema, TripadvisorCard>>,
  Check<Card<typeof stackExchangeAnswerSchema, StackExchangeAnswer>>,
  Check<Same<Omit<Known<z.output<typeof stackExchangeCardSchema>>, 'answer'>, Omit<StackExchangeCard, 'answer'>>>,
  Check<Same<z.output<typeof mapAnswerSchema>, MapAnswer>>,
  Check<Same<keyof CardsOutput, keyof CardsResponse>>,
  Check<Same<CardsOutput['query'] | CardsOutput['map'], CardsResponse['query'] | CardsResponse['map']>>,
  Check<Same<z.output<typeof allFailedSchema>, AllFailedBody>>,
  Check<Same<z.output<typeof contentsPageSchema>, ContentsPage>>,
  Check<Same<z.output<typeof contentsFailureSchema>, ContentsFailureEntry>>,
];
