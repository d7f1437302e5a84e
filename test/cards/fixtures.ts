import type { CardFakes } from '../fakes/cards.js';

/*
 * The subjects the cards tests search for, loaded into the fakes: pages on
 * the fake Wikipedia, their items on the fake Wikidata, records on the fake
 * TheTVDB, locations on the fake Tripadvisor, questions on the fake Stack
 * Exchange. (The fake Nominatim knows Berlin and Paris.)
 */

const ART = 'https://artworks.thetvdb.com/banners';

/** Ten actors (billing order shuffled by `sort`), a creator, two directors, three writers. */
function breakingBadCharacters() {
  const actors = [
    ['Bryan Cranston', 'Walter White', 1],
    ['Aaron Paul', 'Jesse Pinkman', 2],
    ['Anna Gunn', 'Skyler White', 3],
    ['Dean Norris', 'Hank Schrader', 4],
    ['Betsy Brandt', 'Marie Schrader', 5],
    ['RJ Mitte', 'Walter White Jr.', 6],
    ['Bob Odenkirk', 'Saul Goodman', 7],
    ['Giancarlo Esposito', 'Gus Fring', 8],
    ['Jonathan Banks', 'Mike Ehrmantraut', 9],
    ['Laura Fraser', 'Lydia Rodarte-Quayle', 10],
  ] as const;
  return [
    { peopleType: 'Creator', personName: 'Vince Gilligan', name: null, personImgURL: `${ART}/person/vg.jpg`, sort: 0 },
    // listed before Cranston but billed later
    ...actors
      .slice()
      .reverse()
      .map(([personName, name, sort]) => ({
        peopleType: 'Actor',
        personName,
        name,
        image: `${ART}/character/${sort}.jpg`,
        personImgURL: sort === 3 ? null : `${ART}/person/${sort}.jpg`,
        sort,
      })),
    { peopleType: 'Director', personName: 'Michelle MacLaren', name: null, personImgURL: null, sort: 0 },
    { peopleType: 'Director', personName: 'Vince Gilligan', name: null, personImgURL: `${ART}/person/vg.jpg`, sort: 0 },
    { peopleType: 'Writer', personName: 'Peter Gould', name: null, image: `${ART}/person/pg.jpg`, sort: 0 },
    { peopleType: 'Writer', personName: 'Moira Walley-Beckett', name: null, sort: 0 },
    { peopleType: 'Guest Star', personName: 'Someone Else', name: 'Guest', sort: 0 },
  ];
}

export function loadFixtures(f: CardFakes): void {
  // A plain article: Wikipedia only.
  f.wikipedia.addPage({
    title: 'Jupiter',
    description: 'Fifth planet from the Sun',
    extract: 'Jupiter is the fifth planet from the Sun and the largest in the Solar System.',
    wikibase_item: 'Q319',
    thumbnail: 'https://upload.wikimedia.org/thumb/320px-Jupiter.jpg',
    originalimage: { source: 'https://upload.wikimedia.org/Jupiter.jpg', width: 1000 },
  });
  f.wikidata.addItem('Q319', { p31: ['Q634'] });
  f.wikidata.setLabel('Q634', 'planet');
  f.wikipedia.addPage(
    {
      title: 'Jupiter (planète)',
      description: 'Cinquième planète du Système solaire',
      extract: 'Jupiter est la cinquième planète du Système solaire.',
      wikibase_item: 'Q319',
    },
    'fr',
  );
  // A huge original image: the thumbnail is used.
  f.wikipedia.addPage({
    title: 'Saturn',
    description: 'Sixth planet from the Sun',
    extract: 'Saturn is the sixth planet.',
    thumbnail: 'https://upload.wikimedia.org/thumb/320px-Saturn.jpg',
    originalimage: { source: 'https://upload.wikimedia.org/Saturn.jpg', width: 6000 },
  });
  // A redirect: the search hit's summary redirects to the article.
  f.wikipedia.setSearch('big apple', [{ title: 'Big Apple' }]);
  f.wikipedia.addRedirect('Big Apple', 'New York City');
  f.wikipedia.addPage({
    title: 'New York City',
    description: 'Most populous city in the United States',
    extract: 'New York, often called New York City, is the most populous city in the United States.',
    wikibase_item: 'Q60',
  });
  f.wikidata.addItem('Q60', { p31: ['Q515', 'Q1549591'] });
  // Not a standard article.
  f.wikipedia.addPage({ title: 'Mercury', type: 'disambiguation', extract: 'Mercury may refer to:' });
  // A near miss: the only hit is a different title.
  f.wikipedia.setSearch('Deception', [{ title: 'Inception' }]);
  f.wikipedia.addPage({ title: 'Inception', description: '2010 film by Christopher Nolan', wikibase_item: 'Q25188' });

  // A series.
  f.wikipedia.addPage({
    title: 'Breaking Bad',
    description: 'American crime drama television series',
    extract: 'Breaking Bad is an American crime drama television series created by Vince Gilligan.',
    wikibase_item: 'Q1079',
  });
  f.wikidata.addItem('Q1079', { p31: ['Q5398426'] });
  f.thetvdb.addRecord({ tvdb_id: '216', type: 'person', name: 'Breaking Bad Fan', slug: 'x' });
  f.thetvdb.addRecord({
    tvdb_id: '81189',
    type: 'series',
    name: 'Breaking Bad',
    slug: 'breaking-bad',
    year: '2008',
    translations: { eng: 'Breaking Bad', fra: 'Breaking Bad' },
    aliases: ['Breaking Bad: The Series'],
    extended: {
      name: 'Breaking Bad',
      year: '2008',
      firstAired: '2008-01-20',
      overview: 'A chemistry teacher diagnosed with cancer turns to making meth.',
      image: `${ART}/posters/81189-10.jpg`,
      status: { id: 2, name: 'Ended', recordType: 'series', keepUpdated: false },
      genres: [
        { id: 1, name: 'Drama', slug: 'drama' },
        { id: 2, name: 'Crime', slug: 'crime' },
        { id: 3, name: 'Thriller', slug: 'thriller' },
        { id: 4, name: 'Western', slug: 'western' },
      ],
      artworks: [
        { id: 1, image: `${ART}/posters/81189-2.jpg`, type: 2 },
        { id: 2, image: `${ART}/fanart/original/81189-1.jpg`, type: 3 },
      ],
      characters: breakingBadCharacters(),
      translations: {
        nameTranslations: [
          { language: 'eng', name: 'Breaking Bad', isPrimary: true },
          { language: 'deu', name: 'Breaking Bad (DE)' },
        ],
        overviewTranslations: [
          { language: 'deu', overview: 'Ein Chemielehrer …' },
          { language: 'eng', overview: 'Walter White, a high school chemistry teacher, turns to crime.' },
        ],
      },
    },
  });
  // A film (tagline from its translation).
  f.wikipedia.addPage({
    title: 'Heat (1995 film)',
    description: '1995 film by Michael Mann',
    extract: 'Heat is a 1995 American crime film.',
    wikibase_item: 'Q617',
  });
  f.wikipedia.setSearch('heat 1995', [{ title: 'Heat' }, { title: 'Heat (1995 film)' }]);
  f.wikipedia.addPage({ title: 'Heat', type: 'disambiguation' });
  f.wikidata.addItem('Q617', { p31: ['Q11424'] });
  f.thetvdb.addRecord({
    tvdb_id: '1002',
    type: 'movie',
    name: 'Heat',
    slug: 'heat-1995',
    extended: {
      name: 'Heat',
      first_release: { country: 'usa', date: '1995-12-15' },
      image: `${ART}/movies/1002/posters/1.jpg`,
      status: { id: 5, name: 'Released' },
      genres: [{ id: 1, name: 'Crime' }],
      artworks: [{ id: 9, image: `${ART}/movies/1002/backgrounds/1.jpg`, type: 15 }],
      characters: [{ peopleType: 'Director', personName: 'Michael Mann', personImgURL: `${ART}/person/mm.jpg` }],
      translations: {
        nameTranslations: [{ language: 'eng', name: 'Heat' }],
        overviewTranslations: [
          { language: 'eng', overview: 'A group of thieves…', tagline: 'A Los Angeles crime saga' },
        ],
      },
    },
  });
  // For the re-login test.
  f.wikipedia.addPage({
    title: 'Better Call Saul',
    description: 'American legal crime drama television series',
    wikibase_item: 'Q1122',
  });
  f.wikidata.addItem('Q1122', { p31: ['Q5398426'] });
  f.thetvdb.addRecord({
    tvdb_id: '273181',
    type: 'series',
    name: 'Better Call Saul',
    slug: 'better-call-saul',
    extended: { name: 'Better Call Saul', year: '2015', status: { name: 'Ended' } },
  });
  f.wikipedia.addPage({
    title: 'Mad Men',
    description: 'American period drama television series',
    wikibase_item: 'Q223977',
  });
  f.wikidata.addItem('Q223977', { p31: ['Q5398426'] });
  f.thetvdb.addRecord({
    tvdb_id: '80337',
    type: 'series',
    name: 'Mad Men',
    slug: 'mad-men',
    extended: { name: 'Mad Men' },
  });
  // A TheTVDB near miss: the film's search finds only another title.
  f.wikipedia.addPage({ title: 'Deception (2008 film)', description: '2008 film', wikibase_item: 'Q500' });
  f.wikipedia.setSearch('deception 2008', [{ title: 'Deception (2008 film)' }]);
  f.wikidata.addItem('Q500', { p31: ['Q11424'] });
  f.thetvdb.addRecord({ tvdb_id: '27', type: 'movie', name: 'Inception', slug: 'inception', extended: {} });
  f.thetvdb.pinSearch('Deception', ['27']);
  // A probe (no film signal, a title-like query): the only hit is not close enough.
  f.thetvdb.addRecord({
    tvdb_id: '9001',
    type: 'series',
    name: 'Silent Harbour',
    slug: 'silent-harbour',
    extended: {},
  });
  f.thetvdb.pinSearch('silent harbour tales of the deep north', ['9001']);
  // A probe that finds its show; the query is also about code.
  f.thetvdb.addRecord({
    tvdb_id: '9100',
    type: 'series',
    name: 'Python Hunters',
    slug: 'python-hunters',
    extended: { name: 'Python Hunters', year: '2019', status: { name: 'Continuing' } },
  });
  f.stackexchange.addQuestion({
    question_id: 9100,
    title: 'Python hunters: how to find python processes',
    answers: [{ answer_id: 1, body: '<p>ps aux</p>' }],
  });
  // For the timeout tests.
  f.wikipedia.addPage({
    title: 'The Wire',
    description: 'American crime drama television series',
    wikibase_item: 'Q478360',
  });
  f.wikidata.addItem('Q478360', { p31: ['Q5398426'] });
  f.thetvdb.addRecord({
    tvdb_id: '79126',
    type: 'series',
    name: 'The Wire',
    slug: 'the-wire',
    extended: { name: 'The Wire' },
  });
  f.wikipedia.addPage({
    title: 'The Sopranos',
    description: 'American crime drama television series',
    wikibase_item: 'Q23628',
  });
  f.wikidata.addItem('Q23628', { p31: ['Q5398426'] });
  f.thetvdb.addRecord({
    tvdb_id: '75299',
    type: 'series',
    name: 'The Sopranos',
    slug: 'the-sopranos',
    extended: { name: 'The Sopranos' },
  });

  // A landmark: Tripadvisor.
  f.wikipedia.addPage({ title: 'Eiffel Tower', description: 'Tower in Paris, France', wikibase_item: 'Q243' });
  f.wikidata.addItem('Q243', { p31: ['Q570116'] });
  f.tripadvisor.addLocation({
    location_id: '188151',
    name: 'Eiffel Tower',
    category: 'attractions',
    street1: 'Avenue Anatole France 5',
    postalcode: '75007',
    city: 'Paris',
    country: 'France',
    description: 'Completed in 1889, this colossal landmark was initially criticized.',
    rating: '4.5',
    num_reviews: '140512',
    latitude: '48.858370',
    longitude: '2.2944813',
  });
  f.tripadvisor.addLocation({
    location_id: '190001',
    name: 'Eiffel Tower Restaurant',
    category: 'restaurants',
    city: 'Las Vegas',
    country: 'United States',
    rating: '4.0',
  });
  // A category query with the town named.
  f.tripadvisor.addLocation({
    location_id: '700001',
    name: 'Pizzeria Napoli',
    category: 'restaurants',
    street1: '3 Rue Mercière',
    city: 'Lyon',
    country: 'France',
    rating: '3.5',
    num_reviews: '87',
  });
  f.tripadvisor.addLocation({
    location_id: '700002',
    name: 'Musée des Confluences',
    category: 'attractions',
    city: 'Lyon',
    country: 'France',
  });
  // Only for the health test (nothing else classifies it).
  f.wikipedia.addPage({ title: 'Louvre', description: 'Art museum in Paris, France', wikibase_item: 'Q19675' });
  f.wikidata.addItem('Q19675', { p31: ['Q33506'] });
  f.tripadvisor.addLocation({
    location_id: '188757',
    name: 'Louvre Museum',
    category: 'attractions',
    city: 'Paris',
    country: 'France',
    rating: '4.5',
    num_reviews: '100000',
  });
  // A city: the map.
  f.wikipedia.addPage({ title: 'Berlin', description: 'Capital and largest city of Germany', wikibase_item: 'Q64' });
  f.wikidata.addItem('Q64', { p31: ['Q515', 'Q5119'] });

  // Programming questions: Stack Exchange.
  f.wikipedia.addPage({
    title: 'List comprehension',
    description: 'Syntactic construct in some programming languages',
    extract: 'A list comprehension is a syntactic construct.',
  });
  f.stackexchange.addQuestion({
    question_id: 111,
    title: 'Nested list comprehension in Python with if & else',
    tags: ['python'],
    score: 900,
    answers: [],
  });
  f.stackexchange.addQuestion({
    question_id: 222,
    title: 'Python "list comprehension"',
    tags: ['python', 'list', 'list-comprehension', 'syntax', 'python-3.x', 'loops', 'iteration'],
    score: 57,
    view_count: 10432,
    answers: [
      {
        answer_id: 2001,
        score: 12,
        body: '<p>second best</p>',
      },
      {
        answer_id: 2002,
        score: 340,
        is_accepted: true,
        body:
          '<p onclick="steal()">Use <code>[x for x in y if x]</code>.</p><script>alert(1)</script>' +
          '<a href="javascript:alert(1)">bad</a> <a href="https://docs.python.org/3/" onmouseover="x()">docs</a>' +
          '<img src="x" onerror="alert(1)"><pre><code>a = [i * 2 for i in b]</code></pre>',
      },
    ],
  });
  f.stackexchange.addQuestion({
    question_id: 333,
    title: 'Docker volume permissions',
    tags: ['docker'],
    score: 5,
    answers: [{ answer_id: 3001, score: 8, body: `<p>${'Use a named volume and fix the ownership. '.repeat(10)}</p>` }],
  });
  f.stackexchange.addQuestion({
    question_id: 444,
    site: 'superuser',
    title: 'Bash prompt colors',
    tags: ['bash'],
    score: 3,
    answers: [],
  });
  f.stackexchange.addQuestion({
    question_id: 555,
    title: 'Kubernetes ingress timeout',
    tags: ['kubernetes'],
    score: 2,
    answers: [],
  });

  // Safe search.
  f.wikipedia.addPage({ title: 'Pornography', description: 'Explicit sexual material', wikibase_item: 'Q98' });
  f.wikidata.addItem('Q98', { p31: ['Q12136'] });
  f.wikipedia.addPage({ title: 'Reverse cowgirl', description: 'Position', wikibase_item: 'Q777' });
  f.wikidata.addItem('Q777', { p31: ['Q1'], p279: ['Q20828898'] });
  f.wikidata.setLabel('Q1', 'position');
}
