import { z } from 'zod';
import type { ImageResult } from '../contracts/search.js';
import type { Unresponsive } from '../providers/types.js';
import { blendMedia } from './media.js';
import type { SearchOutcome } from './outcome.js';
import { type EngineSlug, engineSchema, langSchema, MESSAGES, Q_MAX_LENGTH, safeSchema } from './params.js';
import type { SearchDeps } from './web.js';

/*
 * GET /api/v1/images/similar/: images like the one a client just opened, by a
 * page-1 image search (media.ts) seeded with its caption.
 *
 * - Seed: the caption `q` with whitespace collapsed and one trailing
 *   " <sep> <1-40 chars>" segment (the site it came from: "Eiffel Tower |
 *   Britannica") dropped, the separators being | · – — - with whitespace on
 *   both sides; a seed shorter than 2 characters falls back to the collapsed
 *   caption. Without a caption, the whitespace-collapsed `query`.
 * - Neither: 400 {"q": "Provide q (the image caption) and/or query (a fallback
 *   seed)."} (docs/api.md), reported with any other invalid field
 *   (engine) like every 400.
 * - Results whose `url` equals `exclude_url` exactly are dropped.
 * - Response {query: <seed>, engine, results, unresponsive} (no tab, no page);
 *   usage counted once, on a 200 (a seed always exists once validation passed).
 */

export const SEED_REQUIRED = 'Provide q (the image caption) and/or query (a fallback seed).';

/** A trailing " - Site name" segment: whitespace, one separator, whitespace, 1-40 non-separator characters. */
const SOURCE_SUFFIX = /\s+[|·–—-]\s+[^|·–—-]{1,40}$/u;

const collapse = (s: string) => s.split(/\s+/u).filter(Boolean).join(' ');
const length = (s: string) => [...s].length;

/** A caption reduced to its subject: "Golden Retriever - American Kennel Club" -> "Golden Retriever". */
export function cleanCaption(caption: string): string {
  const collapsed = collapse(caption);
  const trimmed = collapsed.replace(SOURCE_SUFFIX, '').trim();
  return length(trimmed) >= 2 ? trimmed : collapsed;
}

/** The seed of a similar-images search: from the caption, else from `query`; "" when neither has text. */
export function similarSeed(caption: string, query: string): string {
  return cleanCaption(caption) || collapse(query);
}

/** A stripped text parameter of at most Q_MAX_LENGTH characters ("" when absent). */
const seedText = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const v = raw === undefined ? '' : raw.trim();
    if (v.length > Q_MAX_LENGTH && length(v) > Q_MAX_LENGTH) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.qTooLong });
      return z.NEVER;
    }
    return v;
  });

export const similarImagesQuerySchema = z
  .object({
    q: seedText.meta({ description: 'The caption of the opened image (the primary seed).' }),
    query: seedText.meta({ description: 'The page query (the seed when there is no caption).' }),
    exclude_url: z
      .string()
      .optional()
      .transform((raw) => (raw === undefined ? '' : raw.trim()))
      .meta({ description: 'A result URL to leave out (the opened image).' }),
    engine: engineSchema,
    safe: safeSchema,
    lang: langSchema,
  })
  // Checked even when another field is invalid, so the 400 names every problem.
  .refine((v) => typeof v.q !== 'string' || typeof v.query !== 'string' || similarSeed(v.q, v.query) !== '', {
    path: ['q'],
    message: SEED_REQUIRED,
    when: () => true,
  });

export type SimilarImagesParams = z.output<typeof similarImagesQuerySchema>;

export interface SimilarImagesResponse {
  query: string;
  engine: EngineSlug[];
  results: ImageResult[];
  unresponsive: Unresponsive[];
}

export async function searchSimilarImages(
  deps: SearchDeps,
  params: SimilarImagesParams,
): Promise<SearchOutcome<SimilarImagesResponse>> {
  const seed = similarSeed(params.q, params.query);
  const blended = await blendMedia(
    deps,
    'images',
    { q: seed, page: 1, safe: params.safe, lang: params.lang, date: '' },
    params.engine,
  );
  if (blended.status !== 200) return blended;
  const exclude = params.exclude_url;
  return {
    status: 200,
    body: {
      query: seed,
      engine: params.engine,
      results: exclude ? blended.body.results.filter((r) => r.url !== exclude) : blended.body.results,
      unresponsive: blended.body.unresponsive,
    },
  };
}
