import type { InstantResponse } from './index.js';
import { payloadUnitsJson } from './units.js';

/*
 * The JSON text of an instant response, the same text JSON.stringify writes. A unit answer lists
 * every unit of its category (fourteen lengths, with factors like 1e-9 and 9460730472580800):
 * writing those numbers was most of the cost of the answer's JSON, and the list is the same for
 * every answer of its category, so its JSON is written once (units.ts) and put in place of a
 * stand-in.
 */

/**
 * The payload's `units` written as `0`, its last key. No string can hold this text, as a quote in
 * a JSON string is always escaped, and only the type and the query come after the payload.
 */
const STAND_IN = ',"units":0}';

export function instantResponseJson(body: InstantResponse): string {
  // Only a payload holding one of units.ts's lists finds its JSON; any other payload (or none) does not.
  const payload = body.answer?.payload as { units?: unknown } | null | undefined;
  const units = payload?.units;
  const unitsJson = payloadUnitsJson(units);
  if (unitsJson === undefined) return JSON.stringify(body);
  // The list is swapped for its stand-in in place and put back at once: copying the answer and its
  // payload to leave them untouched cost more than writing the rest of the answer.
  let json: string;
  (payload as { units: unknown }).units = 0;
  try {
    json = JSON.stringify(body);
  } finally {
    (payload as { units: unknown }).units = units;
  }
  const at = json.lastIndexOf(STAND_IN);
  if (at < 0) return JSON.stringify(body);
  return `${json.slice(0, at)},"units":${unitsJson}}${json.slice(at + STAND_IN.length)}`;
}
