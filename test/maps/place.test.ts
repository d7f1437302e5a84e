import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { PlaceFacts } from '../../src/contracts/place.js';
import { nominatimPlaceFacts } from '../../src/providers/nominatim/place.js';
import { formatNumber, nominatimReverseCall, parseNominatimReverse } from '../../src/providers/nominatim/reverse.js';
import { nominatimSearchCall, parseNominatimSearch } from '../../src/providers/nominatim/search.js';
import { buildPlace, coordinatePlace, pythonFloat, quoteLabel, round6 } from '../../src/search/place.js';

const facts = (over: Partial<PlaceFacts> = {}): PlaceFacts => ({
  name: 'Eiffel Tower',
  display_name: 'Eiffel Tower, Avenue Anatole France, Paris, France',
  lat: 48.8584,
  lon: 2.2945,
  category: 'man_made',
  type: 'tower',
  addresstype: 'man_made',
  importance: 0.6,
  boundingbox: null,
  ...over,
});

describe('numbers in place URLs', () => {
  it('renders numbers in the URLs as Python renders a float (the reference: keep that in a port)', () => {
    expect(pythonFloat(2)).toBe('2.0');
    expect(pythonFloat(-3)).toBe('-3.0');
    expect(pythonFloat(48.8584)).toBe('48.8584');
    expect(pythonFloat(0.0001)).toBe('0.0001');
    expect(pythonFloat(0.00005)).toBe('5e-05');
    expect(pythonFloat(-1.5e-7)).toBe('-1.5e-07');
    expect(pythonFloat(1e15)).toBe('1000000000000000.0');
    expect(pythonFloat(1e16)).toBe('1e+16');
    expect(pythonFloat(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(pythonFloat(0)).toBe('0.0');
    expect(pythonFloat(-0)).toBe('-0.0');
  });

  it('writes coordinates for an upstream request as JavaScript does, never with an exponent', () => {
    expect(formatNumber(2)).toBe('2');
    expect(formatNumber(-3)).toBe('-3');
    expect(formatNumber(2.5)).toBe('2.5');
    expect(formatNumber(48.8584)).toBe('48.8584');
    expect(formatNumber(0.00005)).toBe('0.00005');
    expect(formatNumber(0.000001)).toBe('0.000001');
    expect(formatNumber(1e-7)).toBe('0.0000001');
    expect(formatNumber(-1.5e-7)).toBe('-0.00000015');
    expect(formatNumber(1e21)).toBe('1000000000000000000000');
    expect(formatNumber(-0)).toBe('0');
    expect(formatNumber(0)).toBe('0');
  });

  it('rounds coordinates to 6 places, without a negative zero', () => {
    expect(round6(52.510885)).toBe(52.510885);
    expect(round6(13.3989367)).toBe(13.398937);
    expect(round6(-0.0000004)).toBe(0);
    expect(Object.is(round6(-0.0000004), -0)).toBe(false);
    expect(round6(1.0000005)).toBe(1.000001);
  });

  it('percent-encodes the geo: label like Python quote() (letters, digits, _.-~ and / kept)', () => {
    expect(quoteLabel('Eiffel Tower')).toBe('Eiffel%20Tower');
    expect(quoteLabel('Café (Paris)/Nord & Süd')).toBe('Caf%C3%A9%20%28Paris%29/Nord%20%26%20S%C3%BCd');
    expect(quoteLabel("it's a*b!~_.-")).toBe('it%27s%20a%2Ab%21~_.-');
    expect(quoteLabel('東京')).toBe('%E6%9D%B1%E4%BA%AC');
    expect(quoteLabel('a\uD800b')).toBe('a%EF%BF%BDb');
  });
});

describe('buildPlace', () => {
  it('uses squares of ±0.003° and ±0.008° around the point when there is no bounding box', () => {
    expect(buildPlace(facts())).toEqual({
      name: 'Eiffel Tower',
      display_name: 'Eiffel Tower, Avenue Anatole France, Paris, France',
      lat: 48.8584,
      lon: 2.2945,
      category: 'man_made',
      type: 'tower',
      addresstype: 'man_made',
      importance: 0.6,
      embed_url:
        'https://www.openstreetmap.org/export/embed.html?bbox=2.2915%2C48.8554%2C2.2975%2C48.8614&layer=mapnik&marker=48.8584%2C2.2945',
      mini_embed_url:
        'https://www.openstreetmap.org/export/embed.html?bbox=2.2865%2C48.8504%2C2.3025%2C48.8664&layer=mapnik&marker=48.8584%2C2.2945',
      osm_url: 'https://www.openstreetmap.org/?mlat=48.8584&mlon=2.2945#map=16/48.8584/2.2945',
      directions_url: 'https://www.openstreetmap.org/directions?to=48.8584%2C2.2945',
      geo_uri: 'geo:48.8584,2.2945?q=48.8584,2.2945(Eiffel%20Tower)',
    });
  });

  it('uses the bounding box for both maps when it is usable (west, south, east, north)', () => {
    const place = buildPlace(
      facts({
        name: 'Berlin',
        display_name: 'Berlin, Deutschland',
        lat: 52.510885,
        lon: 13.3989367,
        boundingbox: [52.3382448, 52.6755087, 13.088345, 13.7611609],
      }),
    );
    const embed =
      'https://www.openstreetmap.org/export/embed.html?bbox=13.088345%2C52.3382448%2C13.7611609%2C52.6755087&layer=mapnik&marker=52.510885%2C13.398937';
    expect(place.lat).toBe(52.510885);
    expect(place.lon).toBe(13.398937);
    expect(place.embed_url).toBe(embed);
    expect(place.mini_embed_url).toBe(embed);
    expect(place.osm_url).toBe(
      'https://www.openstreetmap.org/?mlat=52.510885&mlon=13.398937#map=16/52.510885/13.398937',
    );
    expect(place.directions_url).toBe('https://www.openstreetmap.org/directions?to=52.510885%2C13.398937');
    expect(place.geo_uri).toBe('geo:52.510885,13.398937?q=52.510885,13.398937(Berlin)');
  });

  it('treats a box narrower or lower than 0.0001° as degenerate', () => {
    const square = buildPlace(facts()).embed_url;
    expect(buildPlace(facts({ boundingbox: [48.8584, 48.8584, 2.2945, 2.2945] })).embed_url).toBe(square);
    expect(buildPlace(facts({ boundingbox: [48.8584, 48.85845, 2.2, 2.3] })).embed_url).toBe(square);
    expect(buildPlace(facts({ boundingbox: [48.8, 48.9, 2.29, 2.29005] })).embed_url).toBe(square);
    // inverted
    expect(buildPlace(facts({ boundingbox: [48.9, 48.8, 2.2, 2.3] })).embed_url).toBe(square);
    // exactly 0.0001 wide is usable
    expect(buildPlace(facts({ boundingbox: [48.8, 48.9, 2.25, 2.2501] })).embed_url).toBe(
      'https://www.openstreetmap.org/export/embed.html?bbox=2.25%2C48.8%2C2.2501%2C48.9&layer=mapnik&marker=48.8584%2C2.2945',
    );
  });

  it('writes integer coordinates with ".0" and tiny ones with an exponent, as the original did', () => {
    const place = buildPlace(
      facts({ name: '', display_name: '', lat: 2, lon: -3, boundingbox: [-1e-7, 2.5, -3.5, 1e-7] }),
    );
    expect(place.embed_url).toBe(
      'https://www.openstreetmap.org/export/embed.html?bbox=-3.5%2C-1e-07%2C1e-07%2C2.5&layer=mapnik&marker=2.0%2C-3.0',
    );
    expect(place.osm_url).toBe('https://www.openstreetmap.org/?mlat=2.0&mlon=-3.0#map=16/2.0/-3.0');
    expect(place.directions_url).toBe('https://www.openstreetmap.org/directions?to=2.0%2C-3.0');
    expect(place.geo_uri).toBe('geo:2.0,-3.0?q=2.0,-3.0');
    const tiny = coordinatePlace(0.00005, -0.0000004, '');
    expect(tiny.lat).toBe(0.00005);
    expect(tiny.lon).toBe(0);
    expect(tiny.embed_url).toBe(
      'https://www.openstreetmap.org/export/embed.html?bbox=-0.003%2C-0.00295%2C0.003%2C0.00305&layer=mapnik&marker=5e-05%2C0.0',
    );
    expect(tiny.geo_uri).toBe('geo:5e-05,0.0?q=5e-05,0.0');
  });

  it('takes the first part of display_name when the place has no name', () => {
    const place = buildPlace(facts({ name: '', display_name: 'Brandenburger Tor, Pariser Platz, Berlin' }));
    expect(place.name).toBe('Brandenburger Tor');
    expect(place.geo_uri).toBe('geo:48.8584,2.2945?q=48.8584,2.2945(Brandenburger%20Tor)');
  });

  it('builds a place from coordinates alone, named by the given name', () => {
    expect(coordinatePlace(48.8584, 2.2945, 'Tour Eiffel (Paris)')).toEqual({
      name: 'Tour Eiffel (Paris)',
      display_name: 'Tour Eiffel (Paris)',
      lat: 48.8584,
      lon: 2.2945,
      category: '',
      type: '',
      addresstype: '',
      importance: 0,
      embed_url:
        'https://www.openstreetmap.org/export/embed.html?bbox=2.2915%2C48.8554%2C2.2975%2C48.8614&layer=mapnik&marker=48.8584%2C2.2945',
      mini_embed_url:
        'https://www.openstreetmap.org/export/embed.html?bbox=2.2865%2C48.8504%2C2.3025%2C48.8664&layer=mapnik&marker=48.8584%2C2.2945',
      osm_url: 'https://www.openstreetmap.org/?mlat=48.8584&mlon=2.2945#map=16/48.8584/2.2945',
      directions_url: 'https://www.openstreetmap.org/directions?to=48.8584%2C2.2945',
      geo_uri: 'geo:48.8584,2.2945?q=48.8584,2.2945(Tour%20Eiffel%20%28Paris%29)',
    });
    expect(coordinatePlace(-45, 170.5, '').geo_uri).toBe('geo:-45.0,170.5?q=-45.0,170.5');
  });
});

describe('Nominatim adapters', () => {
  const config = parseConfig({ NOMINATIM_BASE_URL: 'https://nominatim.example/' });

  it('builds the search request: q, format=jsonv2, limit, accept-language when given', () => {
    const call = nominatimSearchCall({ q: 'a b&c', limit: 7, lang: 'de' }, config);
    expect(call.provider).toBe('provider_13');
    expect(call.request.url).toBe(
      'https://nominatim.example/search?q=a+b%26c&format=jsonv2&limit=7&accept-language=de',
    );
    expect(nominatimSearchCall({ q: 'x', limit: 10, lang: '' }, config).request.url).toBe(
      'https://nominatim.example/search?q=x&format=jsonv2&limit=10',
    );
  });

  it('builds the reverse request from the rounded coordinates', () => {
    const call = nominatimReverseCall({ lat: 48.8584, lon: -0.00005, lang: 'fr' }, config);
    expect(call.request.url).toBe(
      'https://nominatim.example/reverse?lat=48.8584&lon=-0.00005&format=jsonv2&accept-language=fr',
    );
  });

  it('parses jsonv2 places tolerantly (strings for numbers, class for category, bad items dropped)', () => {
    expect(
      nominatimPlaceFacts({
        lat: '52.5108850',
        lon: 13.3989367,
        class: 'boundary',
        type: 'administrative',
        importance: '0.85',
        name: ' Berlin ',
        display_name: 'Berlin, Deutschland',
        boundingbox: ['52.3382448', '52.6755087', '13.0883450', '13.7611609'],
      }),
    ).toEqual({
      name: 'Berlin',
      display_name: 'Berlin, Deutschland',
      lat: 52.510885,
      lon: 13.3989367,
      category: 'boundary',
      type: 'administrative',
      addresstype: '',
      importance: 0.85,
      boundingbox: [52.3382448, 52.6755087, 13.088345, 13.7611609],
    });
    expect(nominatimPlaceFacts({ lat: '1', lon: '2', boundingbox: ['1', '2', 'x', '4'] })?.boundingbox).toBeNull();
    expect(nominatimPlaceFacts({ lat: '1', lon: '2', boundingbox: ['1', '2', '3'] })?.boundingbox).toBeNull();
    expect(nominatimPlaceFacts({ lat: '1', lon: '2', importance: null })?.importance).toBe(0);
    expect(nominatimPlaceFacts({ lat: 'x', lon: '2' })).toBeNull();
    expect(nominatimPlaceFacts({ lat: '', lon: '2' })).toBeNull();
    expect(nominatimPlaceFacts({ lat: '91', lon: '2' })).toBeNull();
    expect(nominatimPlaceFacts(['1', '2'])).toBeNull();
    expect(nominatimPlaceFacts(null)).toBeNull();

    const places = parseNominatimSearch([
      { lat: '1', lon: '2', name: 'A' },
      'junk',
      { lat: 'x' },
      { lat: '3', lon: '4' },
    ]);
    expect(places.map((p) => [p.name, p.lat, p.lon])).toEqual([
      ['A', 1, 2],
      ['', 3, 4],
    ]);
    expect(
      parseNominatimSearch(
        [
          { lat: '1', lon: '2' },
          { lat: '3', lon: '4' },
        ],
        1,
      ),
    ).toHaveLength(1);
    expect(() => parseNominatimSearch({ error: 'x' })).toThrow();
  });

  it('reads "Unable to geocode" as nothing found, and refuses a non-object', () => {
    expect(parseNominatimReverse({ error: 'Unable to geocode' })).toBeNull();
    expect(parseNominatimReverse({ lat: '1', lon: '2', name: 'X' })?.name).toBe('X');
    expect(() => parseNominatimReverse([])).toThrow();
    expect(() => parseNominatimReverse('x')).toThrow();
  });
});
