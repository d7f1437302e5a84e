import type { StackExchangeCard, StackExchangeQuestion } from '../../contracts/cards.js';
import { STACK_EXCHANGE } from '../../providers/stackexchange/index.js';
import {
  type StackExchangeConfig,
  stackExchangeAnswerCall,
  stackExchangeSearchCall,
} from '../../providers/stackexchange/questions.js';
import type { ProviderFlow } from '../../providers/types.js';
import { closeness, isRelevant } from './relevance.js';
import { MAX_SIGNAL_URLS } from './signals.js';

/*
 * The Stack Exchange card (provider_12): the site the web results point to
 * (Stack Overflow unless they come from another network site), its five
 * most relevant questions for the query; among those whose title is relevant
 * to the query, the closest one (ties: the higher score), and its top-voted
 * answer when it has answers. Cached an hour per (query, site, lang), "no
 * card" included.
 */

export interface StackExchangeSite {
  /** The API's `site` parameter. */
  site: string;
  name: string;
}

const KNOWN_SITES: Readonly<Record<string, StackExchangeSite>> = {
  'stackoverflow.com': { site: 'stackoverflow', name: 'Stack Overflow' },
  'superuser.com': { site: 'superuser', name: 'Super User' },
  'serverfault.com': { site: 'serverfault', name: 'Server Fault' },
  'askubuntu.com': { site: 'askubuntu', name: 'Ask Ubuntu' },
  'mathoverflow.net': { site: 'mathoverflow.net', name: 'MathOverflow' },
};

export const DEFAULT_SITE: StackExchangeSite = { site: 'stackoverflow', name: 'Stack Overflow' };

const titleCase = (s: string) => s.replace(/\b\p{L}/gu, (c) => c.toUpperCase());

/** The network site of the first web result on one, else Stack Overflow. */
export function siteOf(urls: readonly string[]): StackExchangeSite {
  for (const url of urls.slice(0, MAX_SIGNAL_URLS)) {
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase().replace(/^www\./, '');
    } catch {
      continue;
    }
    if (Object.hasOwn(KNOWN_SITES, host)) return KNOWN_SITES[host]!;
    const sub = host.endsWith('.stackexchange.com') ? host.slice(0, -'.stackexchange.com'.length) : '';
    if (/^[a-z0-9-]+$/.test(sub) && sub !== 'meta' && sub !== 'api') {
      return { site: sub, name: `${titleCase(sub.replace(/-/g, ' '))} Stack Exchange` };
    }
  }
  return DEFAULT_SITE;
}

/** The question the card shows, or null when no title is relevant to the query. */
export function bestQuestion(questions: readonly StackExchangeQuestion[], q: string): StackExchangeQuestion | null {
  let best: { question: StackExchangeQuestion; closeness: number } | null = null;
  for (const question of questions) {
    if (!isRelevant(question.title, q)) continue;
    const c = closeness(question.title, q);
    if (best === null || c > best.closeness || (c === best.closeness && question.score > best.question.score)) {
      best = { question, closeness: c };
    }
  }
  return best?.question ?? null;
}

export function stackExchangeFlow(
  q: string,
  lang: string,
  where: StackExchangeSite,
  config: StackExchangeConfig,
): ProviderFlow<StackExchangeCard | null> {
  return {
    provider: STACK_EXCHANGE,
    key: JSON.stringify(['card', where.site, lang, q]),
    async run(steps) {
      const questions = await steps.call(stackExchangeSearchCall(q, where.site, config));
      const question = bestQuestion(questions, q);
      if (!question) return null;
      const answer =
        question.answer_count > 0 ? await steps.call(stackExchangeAnswerCall(question, where.site, config)) : null;
      return {
        title: question.title,
        url: question.link,
        site_name: where.name,
        score: question.score,
        answer_count: question.answer_count,
        view_count: question.view_count,
        is_answered: question.is_answered,
        tags: question.tags,
        answer,
      };
    },
  };
}
