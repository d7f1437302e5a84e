import { anyPath, notFound } from './any-path.js';
import { type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Stack Exchange API 2.3 (upstreams.md section 11),
 * STACKEXCHANGE_BASE_URL = `${url}/2.3`; answers gzip-compressed like the
 * real API (when the client accepts it):
 * - GET /2.3/search/advanced?site=&q=&sort=&order=&pagesize=
 *   -> {"items": [question], "has_more", "quota_max", "quota_remaining"}:
 *   the site's questions sharing a word with q, titles entity-encoded.
 * - GET /2.3/questions/{id}/answers?site=&filter=withbody&sort=votes&order=desc&pagesize=
 *   -> {"items": [answer with body]}, top-voted first.
 * setThrottled(true): every call answers 400 {"error_id": 502, "error_name":
 * "throttle_violation", "error_message": …}.
 */

export interface FakeQuestion {
  question_id: number;
  site?: string;
  /** Plain text: encoded as the API does (&quot; &#39; &amp; &lt; &gt;). */
  title: string;
  tags?: string[];
  score?: number;
  view_count?: number;
  is_answered?: boolean;
  answers?: FakeAnswer[];
}

export interface FakeAnswer {
  answer_id: number;
  body: string;
  score?: number;
  is_accepted?: boolean;
}

export interface StackExchangeFake extends FakeServer {
  baseUrl: string;
  addQuestion(question: FakeQuestion): void;
  setThrottled(on: boolean): void;
  searches(): { site: string; q: string; key: string | null }[];
  answerRequests(): number[];
}

const encode = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

export async function startStackExchangeFake(options: FakeServerOptions = {}): Promise<StackExchangeFake> {
  const questions: FakeQuestion[] = [];
  let throttled = false;
  const wrapper = (items: unknown[]) => ({ items, has_more: false, quota_max: 300, quota_remaining: 297 });

  const server = (await startFakeServer(
    anyPath((req) => {
      if (throttled) {
        return {
          status: 400,
          body: {
            error_id: 502,
            error_name: 'throttle_violation',
            error_message: 'too many requests from this IP, more requests available in 33635 seconds',
          },
        };
      }
      const site = req.query.get('site') ?? '';
      if (!site)
        return { status: 400, body: { error_id: 400, error_name: 'bad_parameter', error_message: 'site is required' } };
      if (req.path === '/2.3/search/advanced') {
        const q = words(req.query.get('q') ?? '');
        const size = Number(req.query.get('pagesize') ?? 30);
        const items = questions
          .filter((x) => (x.site ?? 'stackoverflow') === site)
          .filter((x) => [...words(x.title)].some((w) => q.has(w)))
          .slice(0, size)
          .map((x) => ({
            tags: x.tags ?? [],
            owner: { account_id: 1, reputation: 4521, user_id: 456, user_type: 'registered', display_name: 'coder42' },
            is_answered: x.is_answered ?? (x.answers?.length ?? 0) > 0,
            view_count: x.view_count ?? 0,
            ...(x.answers?.some((a) => a.is_accepted)
              ? { accepted_answer_id: x.answers.find((a) => a.is_accepted)!.answer_id }
              : {}),
            answer_count: x.answers?.length ?? 0,
            score: x.score ?? 0,
            last_activity_date: 1700000000,
            creation_date: 1650000000,
            question_id: x.question_id,
            content_license: 'CC BY-SA 4.0',
            link: `https://${site === 'stackoverflow' ? 'stackoverflow.com' : `${site}.com`}/questions/${x.question_id}/q`,
            title: encode(x.title),
          }));
        return { body: wrapper(items) };
      }
      const m = /^\/2\.3\/questions\/(\d+)\/answers$/.exec(req.path);
      if (m) {
        const question = questions.find((x) => x.question_id === Number(m[1]));
        const answers = [...(question?.answers ?? [])]
          .sort((a, b) => (b.score ?? 0) - (a.score ?? 0))
          .slice(0, Number(req.query.get('pagesize') ?? 30))
          .map((a) => ({
            owner: { account_id: 2, reputation: 9000, user_id: 789, display_name: 'answerer' },
            is_accepted: a.is_accepted ?? false,
            score: a.score ?? 0,
            last_activity_date: 1700000000,
            creation_date: 1650000100,
            answer_id: a.answer_id,
            question_id: question?.question_id,
            content_license: 'CC BY-SA 4.0',
            ...(req.query.get('filter') === 'withbody' ? { body: a.body } : {}),
          }));
        return { body: wrapper(answers) };
      }
      return notFound(req.path);
    }),
    { gzip: true, ...options },
  )) as StackExchangeFake;

  server.baseUrl = `${server.url}/2.3`;
  server.addQuestion = (question) => {
    questions.push(question);
  };
  server.setThrottled = (on) => {
    throttled = on;
  };
  server.searches = () =>
    server.requests
      .filter((r) => r.path === '/2.3/search/advanced')
      .map((r) => ({ site: r.query.get('site') ?? '', q: r.query.get('q') ?? '', key: r.query.get('key') }));
  server.answerRequests = () =>
    server.requests.filter((r) => r.path.endsWith('/answers')).map((r) => Number(r.path.split('/')[3]));
  return server;
}
