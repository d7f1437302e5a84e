import { type BraveFake, type BraveFakeOptions, startBraveFake } from './brave.js';
import { type MarginaliaFake, startMarginaliaFake } from './marginalia.js';
import { type MojeekFake, startMojeekFake } from './mojeek.js';
import { type StaanFake, startStaanFake } from './staan.js';
import type { Fixtures } from './web-results.js';

export type { BraveFake } from './brave.js';
export type { FaultMode, FakeRequest, FakeServer } from './fake-server.js';
export type { MarginaliaFake } from './marginalia.js';
export { type MediaFakes, startMediaFakes } from './media.js';
export type { MojeekFake } from './mojeek.js';
export type { PixabayFake } from './pixabay.js';
export type { SepiaFake } from './sepia.js';
export type { StaanFake } from './staan.js';
export type { WorldNewsFake } from './worldnews.js';
export { defaultResults, type FixtureResult, type Fixtures, slugify } from './web-results.js';

/*
 * The four web engines' fakes at once:
 *
 *   const fakes = await startWebFakes({ latencyMs: 50 });
 *   const t = await buildTestApp(db, fakes.env);   // BRAVE_BASE_URL, keys, …
 *   fakes.mojeek.setResults('rust', [{ url: 'https://a.example/' }]);
 *   fakes.staan.setMode({ kind: 'hang' });
 *   …
 *   await fakes.close();
 */

export interface WebFakesOptions {
  /** Latency of every answer, ms (default 0). */
  latencyMs?: number;
  gzip?: boolean;
  /** Per-engine fixtures: query → ranked results. */
  fixtures?: Partial<Record<'brave' | 'mojeek' | 'marginalia' | 'staan', Fixtures>>;
  brave?: Pick<BraveFakeOptions, 'key' | 'suggestKey'>;
}

export interface WebFakes {
  brave: BraveFake;
  mojeek: MojeekFake;
  marginalia: MarginaliaFake;
  staan: StaanFake;
  /** Environment for the app: every engine pointed at its fake, with the keys the fakes accept. */
  env: Record<string, string>;
  /** Base URLs by engine. */
  urls: { brave: string; mojeek: string; marginalia: string; staan: string };
  /** Sets every fake's latency. */
  setLatency(ms: number): void;
  /** Forgets the requests logged so far. */
  resetRequests(): void;
  close(): Promise<void>;
}

export async function startWebFakes(options: WebFakesOptions = {}): Promise<WebFakes> {
  const common = { latencyMs: options.latencyMs, gzip: options.gzip };
  const [brave, mojeek, marginalia, staan] = await Promise.all([
    startBraveFake({ ...common, ...options.brave, fixtures: options.fixtures?.brave }),
    startMojeekFake({ ...common, fixtures: options.fixtures?.mojeek }),
    startMarginaliaFake({ ...common, fixtures: options.fixtures?.marginalia }),
    startStaanFake({ ...common, fixtures: options.fixtures?.staan }),
  ]);
  const all = [brave, mojeek, marginalia, staan];
  return {
    brave,
    mojeek,
    marginalia,
    staan,
    env: {
      BRAVE_BASE_URL: brave.baseUrl,
      BRAVE_API_KEY: brave.key,
      BRAVE_SUGGEST_API_KEY: brave.suggestKey,
      MOJEEK_BASE_URL: mojeek.baseUrl,
      MOJEEK_API_KEY: mojeek.key,
      MARGINALIA_BASE_URL: marginalia.baseUrl,
      MARGINALIA_API_KEY: marginalia.key,
      STAAN_BASE_URL: staan.baseUrl,
      STAAN_API_KEY: staan.key,
    },
    urls: { brave: brave.baseUrl, mojeek: mojeek.baseUrl, marginalia: marginalia.baseUrl, staan: staan.baseUrl },
    setLatency(ms) {
      for (const f of all) f.latencyMs = ms;
    },
    resetRequests() {
      for (const f of all) f.requests.length = 0;
    },
    async close() {
      await Promise.all(all.map((f) => f.close()));
    },
  };
}
