import type { ProviderSlug } from '../../src/providers/types.js';
import { loadFixtures } from '../cards/fixtures.js';
import { type CardFakes, startCardFakes } from './cards.js';
import type { FakeServer } from './fake-server.js';
import { startFrankfurterFake } from './frankfurter.js';
import { startWebFakes, type WebFakes } from './index.js';
import { type LibreTranslateFake, startLibreTranslateFake } from './libretranslate.js';
import { startOpenMeteoFake } from './openmeteo.js';
import { type PixabayFake, startPixabayFake } from './pixabay.js';
import { type SepiaFake, startSepiaFake } from './sepia.js';
import { startWorldNewsFake, type WorldNewsFake } from './worldnews.js';

/*
 * Every upstream's fake at once, so that every provider of the app is
 * configured and every search reaches a real adapter:
 *
 *   const fakes = await startAllFakes();
 *   const t = await buildTestApp(db, { ...fakes.env, … });
 *
 * `servers` maps each provider slug to the fake serving it and the
 * variables that point the app at it (so a test can route a provider
 * elsewhere, see fault-station.ts). The cards fixtures are loaded, so the
 * card providers can be reached (TheTVDB for "breaking bad", Tripadvisor
 * for "Eiffel Tower", Stack Exchange for "python list comprehension", the
 * Nominatim map answer for "Berlin").
 */

export interface ProviderFake {
  slug: ProviderSlug;
  server: FakeServer;
  /** The variables holding this provider's base URL(s) (values point at `server`). */
  urlVariables: string[];
}

export interface AllFakes {
  web: WebFakes;
  pixabay: PixabayFake;
  sepia: SepiaFake;
  worldnews: WorldNewsFake;
  cards: CardFakes;
  openmeteo: FakeServer;
  frankfurter: FakeServer;
  libretranslate: LibreTranslateFake;
  /** Base URLs and credentials of every provider. */
  env: Record<string, string>;
  /** One entry per provider slug (all 16). */
  providers: ProviderFake[];
  /** Forgets the requests every fake logged. */
  resetRequests(): void;
  close(): Promise<void>;
}

/** Used by the tests, `npm run demo`, the API reference and the benchmark's fakes process. */
export async function startAllFakes(options: { latencyMs?: number } = {}): Promise<AllFakes> {
  const [web, pixabay, sepia, worldnews, cards, openmeteo, frankfurter, libretranslate] = await Promise.all([
    startWebFakes(options),
    startPixabayFake(options),
    startSepiaFake(options),
    startWorldNewsFake(options),
    startCardFakes(options),
    startOpenMeteoFake(options),
    startFrankfurterFake(options),
    startLibreTranslateFake(options),
  ]);
  loadFixtures(cards);
  const env: Record<string, string> = {
    ...web.env,
    PIXABAY_BASE_URL: pixabay.baseUrl,
    PIXABAY_API_KEY: pixabay.key,
    SEPIA_BASE_URL: sepia.baseUrl,
    WORLDNEWS_BASE_URL: worldnews.baseUrl,
    WORLDNEWS_API_KEY: worldnews.key,
    ...cards.env,
    OPENMETEO_BASE_URL: openmeteo.url,
    OPENMETEO_GEOCODING_URL: openmeteo.url,
    FRANKFURTER_BASE_URL: frankfurter.url,
    LIBRETRANSLATE_URL: libretranslate.url,
  };
  const providers: ProviderFake[] = [
    { slug: 'provider_01', server: web.brave, urlVariables: ['BRAVE_BASE_URL'] },
    { slug: 'provider_02', server: web.mojeek, urlVariables: ['MOJEEK_BASE_URL'] },
    { slug: 'provider_03', server: web.marginalia, urlVariables: ['MARGINALIA_BASE_URL'] },
    { slug: 'provider_04', server: web.staan, urlVariables: ['STAAN_BASE_URL'] },
    { slug: 'provider_05', server: pixabay, urlVariables: ['PIXABAY_BASE_URL'] },
    { slug: 'provider_06', server: sepia, urlVariables: ['SEPIA_BASE_URL'] },
    { slug: 'provider_07', server: worldnews, urlVariables: ['WORLDNEWS_BASE_URL'] },
    { slug: 'provider_08', server: cards.wikipedia, urlVariables: ['WIKIPEDIA_BASE_URL'] },
    { slug: 'provider_09', server: cards.wikidata, urlVariables: ['WIKIDATA_BASE_URL'] },
    { slug: 'provider_10', server: cards.thetvdb, urlVariables: ['THETVDB_BASE_URL'] },
    { slug: 'provider_11', server: cards.tripadvisor, urlVariables: ['TRIPADVISOR_BASE_URL'] },
    { slug: 'provider_12', server: cards.stackexchange, urlVariables: ['STACKEXCHANGE_BASE_URL'] },
    { slug: 'weather', server: openmeteo, urlVariables: ['OPENMETEO_BASE_URL', 'OPENMETEO_GEOCODING_URL'] },
    { slug: 'currency', server: frankfurter, urlVariables: ['FRANKFURTER_BASE_URL'] },
    { slug: 'provider_13', server: cards.nominatim, urlVariables: ['NOMINATIM_BASE_URL'] },
    { slug: 'translate', server: libretranslate, urlVariables: ['LIBRETRANSLATE_URL'] },
  ];
  const all: FakeServer[] = [
    web.brave,
    web.mojeek,
    web.marginalia,
    web.staan,
    pixabay,
    sepia,
    worldnews,
    ...cards.all,
    openmeteo,
    frankfurter,
    libretranslate,
  ];
  return {
    web,
    pixabay,
    sepia,
    worldnews,
    cards,
    openmeteo,
    frankfurter,
    libretranslate,
    env,
    providers,
    resetRequests() {
      for (const f of all) f.requests.length = 0;
    },
    async close() {
      await Promise.all([
        web.close(),
        cards.close(),
        ...[pixabay, sepia, worldnews, openmeteo, frankfurter, libretranslate].map((f) => f.close()),
      ]);
    },
  };
}
