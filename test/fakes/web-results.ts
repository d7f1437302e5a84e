/*
 * Result lists served by the web-engine fakes. By default every engine derives
 * its results from the query (so any query works and engines partly agree,
 * which exercises the merge); a test can pin the exact ranked list an engine
 * returns for a query with `setResults(q, items)` (or the `fixtures` option).
 */

/** One ranked result as a test describes it; each fake renders it in its upstream's shape. */
export interface FixtureResult {
  url: string;
  title?: string;
  description?: string;
  /** Brave only. */
  age?: string;
  /** Brave `profile.img` / Staan `favicon_url`. */
  favicon?: string;
  /** Brave `deep_results.buttons`. */
  sitelinks?: { title: string; url: string }[];
  /** Staan `display_url`. */
  displayUrl?: string;
  /** Mojeek: the result's date, Unix seconds (default: a day older than the result before it). */
  date?: number;
  /** Staan: published_date (default "2025-03-14"); Brave: page_age, ISO without a zone (default per endpoint). */
  publishedDate?: string;
  /** Mojeek: hidden by safe=1. */
  adult?: boolean;
  /** Mojeek: the page's language (lb prefers it; default en). */
  language?: string;
}

export type Fixtures = Record<string, FixtureResult[]>;

export type EngineName = 'brave' | 'mojeek' | 'marginalia' | 'staan';

export const DEFAULT_TOTAL_RESULTS = 40;

export function slugify(q: string): string {
  return (
    q
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'q'
  );
}

/**
 * The default ranked list of an engine for a query (DEFAULT_TOTAL_RESULTS long), or its results
 * [from, to) (0-based):
 * odd ranks are shared by every engine (`https://shared.example/<slug>/<n>`),
 * even ranks are the engine's own (`https://<engine>.example/<slug>/<n>`).
 */
export function defaultResults(engine: EngineName, q: string, from = 0, to = DEFAULT_TOTAL_RESULTS): FixtureResult[] {
  const slug = slugify(q);
  const out: FixtureResult[] = [];
  for (let n = Math.max(0, from) + 1; n <= Math.min(to, DEFAULT_TOTAL_RESULTS); n++) {
    const shared = n % 2 === 1;
    const url = shared ? `https://shared.example/${slug}/${n}` : `https://${engine}.example/${slug}/${n}`;
    out.push({
      url,
      title: `${q} result ${n}${shared ? '' : ` from ${engine}`}`,
      description: `About ${q}: result number ${n}.`,
    });
  }
  return out;
}

/** Per-query fixtures with a fallback to the derived default list. */
export class ResultBook {
  private readonly fixtures = new Map<string, FixtureResult[]>();
  constructor(
    private readonly engine: EngineName,
    initial: Fixtures = {},
  ) {
    for (const [q, items] of Object.entries(initial)) this.fixtures.set(q, items);
  }
  set(q: string, items: FixtureResult[]): void {
    this.fixtures.set(q, items);
  }
  clear(): void {
    this.fixtures.clear();
  }
  /** Whether `q` has pinned results (else it gets the derived default list). */
  isPinned(q: string): boolean {
    return this.fixtures.has(q);
  }
  /** Results [start, start + count) of the list for `q` (0-based). */
  slice(q: string, start: number, count: number): FixtureResult[] {
    const from = Math.max(0, start);
    const to = from + Math.max(0, count);
    const pinned = this.fixtures.get(q);
    // The default list's results outside the range are not made.
    return pinned ? pinned.slice(from, to) : defaultResults(this.engine, q, from, to);
  }
}

export function intParam(v: string | null, fallback: number): number {
  if (v === null || !/^-?\d+$/.test(v)) return fallback;
  return Number(v);
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
