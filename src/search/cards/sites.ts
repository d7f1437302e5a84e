/*
 * Sites whose results steer the cards' triggers: host names (or host/path
 * prefixes), the same in every language.
 */

/** Hosts (or host/path prefixes) of film and TV databases. */
export const SCREEN_SITES: readonly string[] = [
  'imdb.com',
  'themoviedb.org',
  'thetvdb.com',
  'rottentomatoes.com',
  'metacritic.com',
  'letterboxd.com',
  'tvmaze.com',
  'allocine.fr',
  'filmaffinity.com',
  'justwatch.com',
];

/** Hosts of travel guides and booking sites. */
export const TRAVEL_SITES: readonly string[] = [
  'tripadvisor.com',
  'tripadvisor.co.uk',
  'tripadvisor.fr',
  'tripadvisor.de',
  'booking.com',
  'hotels.com',
  'expedia.com',
  'yelp.com',
  'lonelyplanet.com',
  'opentable.com',
  'thefork.com',
  'airbnb.com',
];

/** Hosts of programming Q&A and documentation. */
export const PROGRAMMING_SITES: readonly string[] = [
  'stackoverflow.com',
  'stackexchange.com',
  'superuser.com',
  'serverfault.com',
  'askubuntu.com',
  'github.com',
  'gitlab.com',
  'developer.mozilla.org',
  'docs.python.org',
  'pypi.org',
  'npmjs.com',
];

/** Hosts (or host/path prefixes) of map sites. */
export const MAP_SITES: readonly string[] = [
  'openstreetmap.org',
  'google.com/maps',
  'maps.google.com',
  'maps.apple.com',
  'bing.com/maps',
  'mapquest.com',
  'here.com',
  'waze.com',
];
