import type { ImageResult } from '../contracts/search.js';
import type { Unresponsive } from '../providers/types.js';
import { blendMedia } from './media.js';
import type { SearchOutcome } from './outcome.js';
import { type EngineSlug, type SimilarImagesParams, similarSeed } from './queries.js';
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
