/*
 * Amounts typed in conversion queries: "10", "-3.5", "1,000.25", "1/2",
 * "1 1/2", ".5", "2e3", and the words "a" / "an" / "one" given by the caller.
 */

const AMOUNT_RE = /^(?:[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[+-]?\d+)?|[+-]?\.\d+|\d+\s+\d+\/\d+|\d+\/\d+)/i;

/** The amount at the start of `s` and the rest, or null when `s` does not start with one. */
export function leadingAmount(s: string): { amount: number; rest: string } | null {
  const m = AMOUNT_RE.exec(s);
  if (!m) return null;
  const text = m[0];
  let amount: number;
  const mixed = /^(\d+)\s+(\d+)\/(\d+)$/.exec(text);
  const fraction = /^(\d+)\/(\d+)$/.exec(text);
  if (mixed) amount = Number(mixed[1]) + Number(mixed[2]) / Number(mixed[3]);
  else if (fraction) amount = Number(fraction[1]) / Number(fraction[2]);
  else amount = Number(text.replace(/,/g, ''));
  if (!Number.isFinite(amount)) return null;
  return { amount, rest: s.slice(text.length).trim() };
}

/** Connectors split into words, by first word (each list in the connectors' order): built once per connector list. */
const connectorIndexes = new WeakMap<readonly string[], Map<string, string[][]>>();

function connectorIndex(connectors: readonly string[]): Map<string, string[][]> {
  let index = connectorIndexes.get(connectors);
  if (!index) {
    index = new Map();
    for (const connector of connectors) {
      const words = connector.split(' ');
      const list = index.get(words[0]!) ?? [];
      list.push(words);
      index.set(words[0]!, list);
    }
    connectorIndexes.set(connectors, index);
  }
  return index;
}

/**
 * Every way to split `text` (words separated by single spaces) around one of
 * the connectors ("10 km to mi" → ["10 km", "mi"]), leftmost first (at one
 * word, in the connectors' order). Most words start no connector: each is
 * looked up once, not compared with every connector (a query that is no
 * conversion is split by both the currency and the unit handlers).
 */
export function splitsAround(text: string, connectors: readonly string[]): [left: string, right: string][] {
  const words = text.split(' ');
  const out: [string, string][] = [];
  const index = connectorIndex(connectors);
  for (let i = 1; i < words.length - 1; i++) {
    const starting = index.get(words[i]!);
    if (!starting) continue;
    for (const c of starting) {
      if (i + c.length > words.length - 1) continue;
      let k = 1;
      while (k < c.length && words[i + k] === c[k]) k++;
      if (k === c.length) out.push([words.slice(0, i).join(' '), words.slice(i + c.length).join(' ')]);
    }
  }
  return out;
}
