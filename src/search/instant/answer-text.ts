import type { InstantAnswer } from './types.js';

type Json = Record<string, unknown>;

/*
 * An instant answer as one readable line, for the doors that answer in text: SearXNG's `answers`
 * (LangChain returns the first as the tool's text) and MCP's instant_answer tool.
 */

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** An instant answer as one line of text; null for the interactive ones (timers, QR codes) that have none. */
export function answerText(answer: InstantAnswer): string | null {
  const a = answer as Json;
  switch (answer.type) {
    case 'math':
      return str(a.result) ? `${str(a.expr) || answer.query} = ${str(a.result)}` : null;
    case 'unit':
      return `${str(a.amount)} ${str(a.from_symbol)} = ${str(a.result)} ${str(a.to_symbol)}`;
    case 'currency':
      return `${str(a.amount)} ${str(a.from_code)} = ${str(a.result)} ${str(a.to_code)}`;
    case 'weather': {
      const where = [str(a.location), str(a.country)].filter(Boolean).join(', ');
      return `${where}: ${str(a.description)}, ${str(a.temp_c)} °C (${str(a.temp_f)} °F), humidity ${str(a.humidity)}%, wind ${str(a.wind_kmh)} km/h ${str(a.wind_dir)}`;
    }
    case 'timestamp':
      return `${str(a.epoch)} = ${str(a.utc_full)}`;
    case 'ip':
      return `Your IP address: ${str(a.ip)}`;
    case 'http':
      return `HTTP ${str(a.code)} ${str(a.name)}: ${str(a.description)}`;
    case 'timer':
    case 'qr':
      return null;
  }
  for (const field of ['result', 'output', 'formatted', 'value', 'hex', 'utc', 'description']) {
    const value = str(a[field]);
    if (value !== '') return value;
  }
  return null;
}
