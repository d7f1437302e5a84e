import type { Config } from '../../config/index.js';
import { WIKIDATA_ITEM, wikidataClaimsCall, wikidataLabelsCall } from '../../providers/wikidata/classes.js';
import type { ProviderFlow } from '../../providers/types.js';
import { WIKIDATA } from '../../providers/wikidata/index.js';
import { keywordSet } from './text.js';

/*
 * What the Wikipedia card's subject is, from Wikidata (provider_09): its
 * classes ("instance of" P31, "subclass of" P279) and their English labels.
 *
 * - person: an instance of human (Q5).
 * - movie_tv: an instance of a film or show class, or of a class whose label
 *   names one (but not the industry around them: "film studio", "film
 *   festival"…).
 * - place: an instance of a settlement, country, landform, building… (ids or
 *   label words); travel_place (also a place): somewhere to eat, sleep or
 *   visit (restaurant, hotel, museum, landmark…).
 * - adult: a P31 or P279 class labelled as a sexual act, pornography, a sex
 *   toy… (safe search hides the Wikipedia card).
 * Cached for an hour per item (with the flow's value).
 */

export type SubjectTag = 'person' | 'movie_tv' | 'place' | 'travel_place';

export interface Classification {
  tags: SubjectTag[];
  adult: boolean;
}

/** At most this many class ids go into one labels call (the API takes 50). */
const MAX_LABELLED = 50;

const PERSON_CLASSES = new Set(['Q5']);

const MOVIE_TV_CLASSES = new Set([
  'Q11424', // film
  'Q24862', // short film
  'Q93204', // documentary film
  'Q202866', // animated film
  'Q506240', // television film
  'Q5398426', // television series
  'Q581714', // animated series
  'Q1259759', // miniseries
  'Q526877', // web series
  'Q15416', // television program
  'Q63952888', // anime television series
]);

const TRAVEL_CLASSES = new Set([
  'Q570116', // tourist attraction
  'Q33506', // museum
  'Q207694', // art museum
  'Q27686', // hotel
  'Q11707', // restaurant
  'Q194195', // amusement park
  'Q46169', // national park
  'Q43501', // zoo
  'Q23413', // castle
  'Q16560', // palace
  'Q483110', // stadium
]);

const PLACE_CLASSES = new Set([
  'Q515', // city
  'Q1549591', // big city
  'Q5119', // capital
  'Q3957', // town
  'Q532', // village
  'Q486972', // human settlement
  'Q6256', // country
  'Q3624078', // sovereign state
  'Q8502', // mountain
  'Q23397', // lake
  'Q4022', // river
  'Q23442', // island
  'Q1248784', // airport
  'Q12280', // bridge
  'Q4989906', // monument
]);

const MOVIE_TV_LABELS = keywordSet([
  'film',
  'movie',
  'television series',
  'tv series',
  'television program',
  'television programme',
  'television show',
  'miniseries',
  'web series',
  'sitcom',
  'soap opera',
  'telenovela',
  'anime',
  'documentary',
]);

/** Class labels about the business around films, not a film. */
const INDUSTRY_LABELS = keywordSet([
  'studio',
  'company',
  'organization',
  'organisation',
  'award',
  'festival',
  'genre',
  'occupation',
  'profession',
  'magazine',
  'journal',
  'website',
  'database',
  'character',
  'channel',
  'network',
  'technique',
  'format',
]);

const TRAVEL_LABELS = keywordSet([
  'hotel',
  'hostel',
  'resort',
  'restaurant',
  'café',
  'cafe',
  'pub',
  'museum',
  'art gallery',
  'tourist attraction',
  'landmark',
  'amusement park',
  'theme park',
  'water park',
  'national park',
  'zoo',
  'aquarium',
  'botanical garden',
  'castle',
  'palace',
  'cathedral',
  'basilica',
  'church building',
  'mosque',
  'synagogue',
  'temple',
  'monastery',
  'abbey',
  'monument',
  'memorial',
  'lighthouse',
  'observation tower',
  'skyscraper',
  'stadium',
  'arena',
  'opera house',
  'theatre',
  'theater',
  'beach',
  'casino',
  'world heritage site',
  'archaeological site',
]);

const PLACE_LABELS = keywordSet([
  'city',
  'town',
  'village',
  'human settlement',
  'commune',
  'municipality',
  'locality',
  'country',
  'sovereign state',
  'state',
  'province',
  'region',
  'county',
  'district',
  'prefecture',
  'department',
  'canton',
  'borough',
  'suburb',
  'neighborhood',
  'neighbourhood',
  'capital',
  'metropolis',
  'river',
  'lake',
  'sea',
  'ocean',
  'bay',
  'strait',
  'mountain',
  'volcano',
  'hill',
  'island',
  'peninsula',
  'archipelago',
  'desert',
  'valley',
  'glacier',
  'forest',
  'park',
  'square',
  'street',
  'avenue',
  'boulevard',
  'bridge',
  'tower',
  'airport',
  'railway station',
  'port',
  'harbor',
  'harbour',
  'canal',
  'dam',
]);

const ADULT_LABELS = keywordSet([
  'sexual act',
  'sexual activity',
  'human sexual activity',
  'sexual practice',
  'sexual intercourse',
  'sexual behavior',
  'sexual behaviour',
  'sex position',
  'oral sex',
  'anal sex',
  'group sex',
  'masturbation',
  'paraphilia',
  'sexual fetishism',
  'pornography',
  'pornographic film',
  'pornographic magazine',
  'pornographic website',
  'pornographic genre',
  'erotica',
  'sex toy',
]);

/** The tags and adult flag of an item with these classes and class labels (lower-case English). */
export function classify(
  instanceOf: readonly string[],
  subclassOf: readonly string[],
  labels: Record<string, string>,
): Classification {
  const p31Labels = instanceOf.map((id) => labels[id] ?? '').filter(Boolean);
  const allLabels = [...instanceOf, ...subclassOf].map((id) => labels[id] ?? '').filter(Boolean);
  const has = (ids: ReadonlySet<string>) => instanceOf.some((id) => ids.has(id));
  const tags = new Set<SubjectTag>();
  if (has(PERSON_CLASSES)) tags.add('person');
  if (has(MOVIE_TV_CLASSES) || p31Labels.some((l) => MOVIE_TV_LABELS.in(l) && !INDUSTRY_LABELS.in(l))) {
    tags.add('movie_tv');
  }
  if (has(TRAVEL_CLASSES) || p31Labels.some((l) => TRAVEL_LABELS.in(l))) {
    tags.add('travel_place');
    tags.add('place');
  }
  if (has(PLACE_CLASSES) || p31Labels.some((l) => PLACE_LABELS.in(l))) tags.add('place');
  return { tags: [...tags], adult: allLabels.some((l) => ADULT_LABELS.in(l)) };
}

/** The classification flow of a Wikidata item (null when the id is not a valid item: nothing is asked). */
export function classificationFlow(
  item: string,
  config: Pick<Config, 'WIKIDATA_BASE_URL'>,
): ProviderFlow<Classification> | null {
  if (!WIKIDATA_ITEM.test(item)) return null;
  return {
    provider: WIKIDATA,
    key: JSON.stringify(['classes', item]),
    async run(steps) {
      const [p31, p279] = await Promise.all([
        steps.call(wikidataClaimsCall(item, 'P31', config)),
        steps.call(wikidataClaimsCall(item, 'P279', config)),
      ]);
      const ids = [...new Set([...p31, ...p279])].slice(0, MAX_LABELLED);
      const labels = ids.length > 0 ? await steps.call(wikidataLabelsCall(ids, config)) : {};
      return classify(p31, p279, labels);
    },
  };
}
