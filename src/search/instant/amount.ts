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

/** Connectors ready for `splitsAround`: each with a space on either side, in the list's order. */
export interface Connectors {
  readonly spaced: readonly string[];
}

/** Built once per connector list (at module load), not per query. */
export function connectorList(connectors: readonly string[]): Connectors {
  return { spaced: connectors.map((c) => ` ${c} `) };
}

/**
 * Every way to split `text` (words separated by single spaces) around one of
 * the connectors ("10 km to mi" → ["10 km", "mi"]), leftmost first (at one
 * word, in the connectors' order).
 *
 * A split is an occurrence of " <connector> " in the text: one indexOf per
 * connector, no words split and joined again. Both the currency and the unit
 * handlers split every query that reaches them.
 */
export function splitsAround(text: string, connectors: Connectors): [left: string, right: string][] {
  const { spaced } = connectors;
  /** [position of the space before the connector, connector index]. */
  let found: [number, number][] | undefined;
  for (let c = 0; c < spaced.length; c++) {
    const needle = spaced[c]!;
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
      (found ??= []).push([at, c]);
    }
  }
  if (found === undefined) return [];
  if (found.length > 1) found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return found.map(([at, c]) => [text.slice(0, at), text.slice(at + spaced[c]!.length)]);
}
