import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import type { ProviderSlug } from '../providers/types.js';
import { createExtractor, type Extractor } from './extract/index.js';
import { addressPolicy } from './fetch/address-policy.js';
import { createPageFetcher } from './fetch/page-fetcher.js';
import { createHostSlots } from './host-slots.js';
import { type CachedPage, type ContentsService, createContentsService, type PageCache } from './service.js';

/*
 * Page contents (CONTENTS_ENABLED): decorates the app with `contents`, the service the contents
 * endpoints, web search's `contents=n` and MCP's read_page use, or null when the feature is off
 * (its paths then answer 404 and MCP lists no read_page).
 *
 * Its cache has the response cache's two levels: this process's (an LRU bounded in bytes) and the
 * one every worker and instance shares (the shared cache, when other processes use the database).
 */

declare module 'fastify' {
  interface FastifyInstance {
    contents: ContentsService | null;
  }
}

/** The shared cache's name for the pages it holds (its `provider` column). */
export const CONTENTS_CACHE_OWNER = 'contents' as ProviderSlug;
/** How long a fetch may hold its site's slot past its timeout before the slot expires by itself. */
const HOLD_MARGIN_MS = 5000;

function pageBytes(page: CachedPage): number {
  return 512 + 2 * (page.content.length + page.title.length + page.excerpt.length + page.finalUrl.length);
}

function pageCache(app: FastifyInstance, ttlMs: number, maxBytes: number): PageCache {
  // CONTENTS_CACHE_SECONDS=0: every read fetches.
  if (ttlMs <= 0) return { getOrFetch: (_key, _fresh, fetch) => fetch() };
  const lru = new LRUCache<string, CachedPage>({
    maxSize: maxBytes,
    maxEntrySize: maxBytes,
    sizeCalculation: pageBytes,
    ttl: ttlMs,
  });
  const inFlight = new Map<string, Promise<CachedPage>>();
  const shared = app.sharedCache;
  return {
    getOrFetch(key, fresh, fetch) {
      if (!fresh) {
        const hit = lru.get(key);
        if (hit) return Promise.resolve(hit);
        const pending = inFlight.get(key);
        if (pending) return pending;
      }
      const load = !fresh && shared ? () => shared.getOrFetch(key, CONTENTS_CACHE_OWNER, ttlMs, fetch) : fetch;
      const p = load().then((page) => {
        lru.set(key, page);
        return page;
      });
      if (!fresh) {
        inFlight.set(key, p);
        void p.finally(() => inFlight.delete(key)).catch(() => {});
      }
      return p;
    },
  };
}

async function contentsPlugin(app: FastifyInstance): Promise<void> {
  const config = app.config;
  if (!config.CONTENTS_ENABLED) {
    app.decorate('contents', null);
    return;
  }
  const timeoutMs = config.CONTENTS_TIMEOUT_SECONDS * 1000;
  const fetcher = createPageFetcher({
    allowHosts: config.CONTENTS_ALLOW_HOSTS,
    maxBytes: config.CONTENTS_MAX_BYTES,
    timeoutMs,
    userAgent: config.CONTENTS_USER_AGENT,
    respectRobots: config.CONTENTS_RESPECT_ROBOTS,
  });
  // The worker threads start with the first page read: a server that never reads one (or not yet)
  // spends nothing on them.
  let pool: Extractor | undefined;
  const started = () =>
    (pool ??= createExtractor({
      threads: config.CONTENTS_EXTRACT_THREADS,
      timeoutMs: Math.min(timeoutMs, config.CONTENTS_EXTRACT_TIMEOUT_SECONDS * 1000),
      maxQueue: config.CONTENTS_EXTRACT_THREADS * 16,
    }));
  const extractor: Extractor = {
    extract: (input, opts) => started().extract(input, opts),
    close: () => pool?.close() ?? Promise.resolve(),
  };
  const hostSlots = createHostSlots(app.pool, {
    concurrency: config.CONTENTS_HOST_CONCURRENCY,
    holdMs: timeoutMs + HOLD_MARGIN_MS,
    log: app.log,
  });
  const service = createContentsService({
    fetcher,
    extractor,
    policy: addressPolicy(config.CONTENTS_ALLOW_HOSTS),
    hostSlots,
    cache: pageCache(app, config.CONTENTS_CACHE_SECONDS * 1000, config.CONTENTS_CACHE_MAX_MB * 1024 * 1024),
    timeoutMs,
    log: app.log,
  });
  app.decorate('contents', service);
  app.addHook('onClose', async () => {
    await Promise.all([fetcher.close(), extractor.close(), hostSlots.close()]);
  });
}

export default fastifyPlugin(contentsPlugin, { name: 'sift-contents' });
