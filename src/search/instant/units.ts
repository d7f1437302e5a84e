import { connectorList, leadingAmount, splitsAround } from './amount.js';
import { alternation, formatNumber, prefixMatcher, roundSignificant, spaceArrows } from './text.js';
import type { AnswerFields, InstantHandler } from './types.js';
import { CATEGORIES, type CategoryDef, type UnitDef } from './units-data.js';
import { UNIT_VOCABULARY } from './vocabulary.js';

/*
 * `unit`: conversions within length, mass, temperature, volume, area,
 * speed, time, data size and cooking measures ("10 km to miles", "100 f in
 * c", "2 cups to ml", "how many feet in a mile", "km to mi" = 1 km).
 * Both units must belong to one category (the first, in CATEGORIES order,
 * holding both). Fields: `category`, `category_label`, `amount` (for
 * people), `amount_raw`, `result` (for people, 6 significant digits),
 * `result_raw` (12 significant digits), `from_key`, `to_key`,
 * `from_symbol`, `to_symbol`, `payload` (everything a client needs to
 * convert within the category itself: {from, to, base, units[{key,
 * symbol, label, factor, offset}]}, base = value × factor + offset).
 */

type Candidate = { category: CategoryDef; unit: UnitDef };

const V = Object.values(UNIT_VOCABULARY);
const NAMES = new Map<string, string>(V.flatMap((v) => Object.entries(v.names)));
const CONNECTORS = connectorList([...new Set(V.flatMap((v) => v.connectors))].sort((a, b) => b.length - a.length));
const ARTICLES = new Set(V.flatMap((v) => v.articles));
const afterPrefix = prefixMatcher(V.flatMap((v) => v.prefixes));
const HOW_MANY = new RegExp(
  `^${alternation(V.flatMap((v) => v.howMany))}\\s+(.+?)\\s+(?:are\\s+|is\\s+|make\\s+)?(?:in|per|to)\\s+(.+)$`,
  'u',
);

const normaliseUnit = (typed: string) =>
  typed
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/\.$/, '')
    .replace(/\^?2$|²$/, '2')
    .replace(/\^?3$|³$/, '3')
    .replace(/^(?:degrees?|deg) (?=[cfk]$)/, '°')
    .trim();

const BY_ALIAS = new Map<string, Candidate[]>();
for (const category of CATEGORIES) {
  for (const unit of category.units) {
    for (const alias of new Set(unit.aliases.map(normaliseUnit))) {
      const list = BY_ALIAS.get(alias) ?? [];
      list.push({ category, unit });
      BY_ALIAS.set(alias, list);
    }
  }
}
const BY_ID = new Map<string, Candidate[]>();
for (const category of CATEGORIES) {
  for (const unit of category.units) {
    const list = BY_ID.get(unit.id) ?? [];
    list.push({ category, unit });
    BY_ID.set(unit.id, list);
  }
}

/** Every unit a typed name or symbol can mean. */
export function unitCandidates(typed: string): Candidate[] {
  const t = normaliseUnit(typed);
  const named = NAMES.get(t);
  if (named) return BY_ID.get(named) ?? [];
  const direct = BY_ALIAS.get(t);
  if (direct) return direct;
  return t.length >= 3 && t.endsWith('s') ? (BY_ALIAS.get(t.slice(0, -1)) ?? []) : [];
}

function pick(from: Candidate[], to: Candidate[]): [Candidate, Candidate] | null {
  for (const category of CATEGORIES) {
    const f = from.find((c) => c.category === category);
    const t = to.find((c) => c.category === category);
    if (f && t && f.unit.id !== t.unit.id) return [f, t];
  }
  return null;
}

export function convert(amount: number, from: UnitDef, to: UnitDef): number {
  const base = amount * from.factor + (from.offset ?? 0);
  return (base - (to.offset ?? 0)) / to.factor;
}

/** Each category's units as the payload lists them: built once, shared by every answer (frozen: never changed). */
const PAYLOAD_UNITS = new Map(
  CATEGORIES.map((category) => [
    category,
    Object.freeze(
      category.units.map((unit) =>
        Object.freeze({
          key: unit.key,
          symbol: unit.symbol,
          label: unit.label,
          factor: unit.factor,
          offset: unit.offset ?? 0,
        }),
      ),
    ),
  ]),
);

function describe(amount: number, f: Candidate, t: Candidate): AnswerFields | null {
  const value = convert(amount, f.unit, t.unit);
  if (!Number.isFinite(value)) return null;
  const category = f.category;
  return {
    category: category.key,
    category_label: category.label,
    amount: formatNumber(amount, 12),
    amount_raw: amount,
    result: formatNumber(value, 6),
    result_raw: roundSignificant(value, 12),
    from_key: f.unit.key,
    to_key: t.unit.key,
    from_symbol: f.unit.symbol,
    to_symbol: t.unit.symbol,
    payload: {
      from: f.unit.key,
      to: t.unit.key,
      base: category.base,
      units: PAYLOAD_UNITS.get(category)!,
    },
  };
}

/** "10 km", "10km", "km", "a mile" → amount and candidates; null when not a unit. */
function amountAndUnit(left: string): { amount: number; units: Candidate[] } | null {
  const words = left.split(' ');
  if (words.length > 1 && ARTICLES.has(words[0]!)) {
    const units = unitCandidates(words.slice(1).join(' '));
    return units.length ? { amount: 1, units } : null;
  }
  const lead = leadingAmount(left);
  if (lead) {
    if (lead.rest === '') return null;
    const units = unitCandidates(lead.rest);
    return units.length ? { amount: lead.amount, units } : null;
  }
  const units = unitCandidates(left);
  return units.length ? { amount: 1, units } : null;
}

export function parseConversion(text: string): AnswerFields | null {
  let s = spaceArrows(text);
  s = afterPrefix(s) ?? s;
  const how = HOW_MANY.exec(s);
  if (how) {
    const to = unitCandidates(how[1]!);
    const from = amountAndUnit(how[2]!);
    if (to.length && from) {
      const pair = pick(from.units, to);
      if (pair) return describe(from.amount, pair[0], pair[1]);
    }
  }
  for (const [left, right] of splitsAround(s, CONNECTORS)) {
    const to = unitCandidates(right);
    if (!to.length) continue;
    const from = amountAndUnit(left);
    if (!from) continue;
    const pair = pick(from.units, to);
    if (pair) return describe(from.amount, pair[0], pair[1]);
  }
  return null;
}

export const unitHandler: InstantHandler = {
  type: 'unit',
  answer: async (ctx) => parseConversion(ctx.text),
};
