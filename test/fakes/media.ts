import { type BraveFake, startBraveFake } from './brave.js';
import { type PixabayFake, startPixabayFake } from './pixabay.js';
import { type SepiaFake, startSepiaFake } from './sepia.js';
import { startWorldNewsFake, type WorldNewsFake } from './worldnews.js';

/*
 * The media providers' fakes at once (Brave for images/news/videos, Pixabay,
 * Sepia Search, World News API):
 *
 *   const fakes = await startMediaFakes();
 *   const t = await buildTestApp(db, fakes.env);
 *   fakes.sepia.setMode({ kind: 'hang' });
 */

export interface MediaFakes {
  brave: BraveFake;
  pixabay: PixabayFake;
  sepia: SepiaFake;
  worldnews: WorldNewsFake;
  /** Environment for the app: every media provider pointed at its fake, with the keys the fakes accept. */
  env: Record<string, string>;
  /** Back to normal answers (no fault mode, no forced failure). */
  reset(): void;
  /** Forgets the requests logged so far. */
  resetRequests(): void;
  close(): Promise<void>;
}

export async function startMediaFakes(options: { latencyMs?: number } = {}): Promise<MediaFakes> {
  const [brave, pixabay, sepia, worldnews] = await Promise.all([
    startBraveFake(options),
    startPixabayFake(options),
    startSepiaFake(options),
    startWorldNewsFake(options),
  ]);
  const all = [brave, pixabay, sepia, worldnews];
  return {
    brave,
    pixabay,
    sepia,
    worldnews,
    env: {
      BRAVE_BASE_URL: brave.baseUrl,
      BRAVE_API_KEY: brave.key,
      PIXABAY_BASE_URL: pixabay.baseUrl,
      PIXABAY_API_KEY: pixabay.key,
      SEPIA_BASE_URL: sepia.baseUrl,
      WORLDNEWS_BASE_URL: worldnews.baseUrl,
      WORLDNEWS_API_KEY: worldnews.key,
    },
    reset() {
      for (const f of all) f.setMode({ kind: 'normal' });
      brave.failWith(null);
      pixabay.failWith(null);
      sepia.failWith(null);
      worldnews.failWith(null);
    },
    resetRequests() {
      for (const f of all) f.requests.length = 0;
    },
    async close() {
      await Promise.all(all.map((f) => f.close()));
    },
  };
}
