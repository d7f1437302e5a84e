import type { FakeServer } from './fake-server.js';
import { type NominatimFake, startNominatimFake } from './nominatim.js';
import { type StackExchangeFake, startStackExchangeFake } from './stackexchange.js';
import { startTheTvdbFake, type TheTvdbFake } from './thetvdb.js';
import { startTripadvisorFake, type TripadvisorFake } from './tripadvisor.js';
import { startWikidataFake, type WikidataFake } from './wikidata.js';
import { startWikipediaFake, type WikipediaFake } from './wikipedia.js';

/*
 * Every upstream of GET /api/v1/cards/ at once:
 *
 *   const fakes = await startCardFakes();
 *   const t = await buildTestApp(db, fakes.env);  // base URLs and keys
 *   fakes.wikipedia.addPage({ title: 'Jupiter', … });
 *   fakes.thetvdb.setMode({ kind: 'hang' });
 */

export interface CardFakes {
  wikipedia: WikipediaFake;
  wikidata: WikidataFake;
  thetvdb: TheTvdbFake;
  tripadvisor: TripadvisorFake;
  stackexchange: StackExchangeFake;
  nominatim: NominatimFake;
  all: FakeServer[];
  env: Record<string, string>;
  /** Back to normal mode, requests forgotten. */
  reset(): void;
  close(): Promise<void>;
}

export async function startCardFakes(options: { latencyMs?: number } = {}): Promise<CardFakes> {
  const [wikipedia, wikidata, thetvdb, tripadvisor, stackexchange, nominatim] = await Promise.all([
    startWikipediaFake(options),
    startWikidataFake(options),
    startTheTvdbFake(options),
    startTripadvisorFake(options),
    startStackExchangeFake(options),
    startNominatimFake(options),
  ]);
  const all: FakeServer[] = [wikipedia, wikidata, thetvdb, tripadvisor, stackexchange, nominatim];
  return {
    wikipedia,
    wikidata,
    thetvdb,
    tripadvisor,
    stackexchange,
    nominatim,
    all,
    env: {
      WIKIPEDIA_BASE_URL: `${wikipedia.url}/{lang}`,
      WIKIDATA_BASE_URL: wikidata.url,
      THETVDB_BASE_URL: thetvdb.baseUrl,
      THETVDB_API_KEY: thetvdb.key,
      TRIPADVISOR_BASE_URL: tripadvisor.baseUrl,
      TRIPADVISOR_API_KEY: tripadvisor.key,
      STACKEXCHANGE_BASE_URL: stackexchange.baseUrl,
      NOMINATIM_BASE_URL: nominatim.url,
    },
    reset() {
      for (const f of all) {
        f.setMode({ kind: 'normal' });
        f.requests.length = 0;
      }
    },
    async close() {
      await Promise.all(all.map((f) => f.close()));
    },
  };
}
