/*
 * Process 1 of the benchmark: every upstream's fake (test/fakes) with one
 * fixed latency (argv[2], ms, default 50), plus a small control endpoint to
 * switch fault modes. Prints one JSON line {env, control, fakes} on stdout
 * when ready: `env` points every provider of Sift at its fake (base URLs and
 * the keys the fakes accept), so every provider is configured.
 *
 * The fakes: the four web engines (Brave also serves images, news, videos
 * and suggest), Pixabay, Sepia Search, World News, the card providers
 * (Wikipedia, Wikidata, TheTVDB, Tripadvisor, Stack Exchange, with the cards
 * tests' subjects loaded: Breaking Bad, Eiffel Tower, list comprehension,
 * Berlin…), Nominatim (Berlin and Paris), Open-Meteo, Frankfurter and
 * LibreTranslate.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeServer } from '../test/fakes/fake-server.js';
import { startAllFakes } from '../test/fakes/all.js';

const latencyMs = Number(process.argv[2] ?? 50);
const all = await startAllFakes({ latencyMs });
const { web, pixabay, sepia, worldnews, cards, openmeteo, frankfurter, libretranslate, env } = all;

const fakes: Record<string, FakeServer> = {
  brave: web.brave,
  mojeek: web.mojeek,
  marginalia: web.marginalia,
  staan: web.staan,
  pixabay,
  sepia,
  worldnews,
  wikipedia: cards.wikipedia,
  wikidata: cards.wikidata,
  thetvdb: cards.thetvdb,
  tripadvisor: cards.tripadvisor,
  stackexchange: cards.stackexchange,
  nominatim: cards.nominatim,
  openmeteo,
  frankfurter,
  libretranslate,
};

// The fakes log every request for the tests; a benchmark sends hundreds of thousands: forget them.
const forget = setInterval(() => {
  for (const f of Object.values(fakes)) f.requests.length = 0;
}, 1000);

// POST /mode?engine=staan&kind=hang  |  kind=normal   (engine: any key of `fakes`)
const control = createServer((req, res) => {
  const u = new URL(req.url ?? '/', 'http://control');
  const fake = fakes[u.searchParams.get('engine') ?? ''];
  const kind = u.searchParams.get('kind');
  if (!fake || (kind !== 'hang' && kind !== 'normal')) {
    res.writeHead(400).end('bad request');
    return;
  }
  fake.setMode({ kind });
  res.writeHead(204).end();
});
await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()));

process.stdout.write(
  `${JSON.stringify({
    env,
    control: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    fakes: Object.keys(fakes),
  })}\n`,
);
process.on('SIGTERM', async () => {
  clearInterval(forget);
  control.close();
  await Promise.all(Object.values(fakes).map((f) => f.close()));
  process.exit(0);
});
