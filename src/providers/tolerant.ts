import { z } from 'zod';

/*
 * Tolerant zod building blocks for upstream responses: a missing or
 * mistyped field becomes "" / [] / the object's defaults instead of failing
 * the whole response; list items that are not objects are dropped.
 */

/** A string field: numbers are stringified, anything else becomes "". */
export const text = z
  .unknown()
  .optional()
  .transform((v): string => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    return '';
  });

/** A string field of display text: runs of whitespace (an API's raw newlines and tabs) become one space, trimmed. */
export const line = text.transform((v): string => (/\s\s|[^\S ]|^\s|\s$/.test(v) ? v.replace(/\s+/g, ' ').trim() : v));

/** An array passed through untouched (its elements unchecked), else []. */
export const rawList = z
  .unknown()
  .optional()
  .transform((v): unknown[] => (Array.isArray(v) ? v : []));

/** An array of `item`: elements that do not parse are dropped; a non-array is []. */
export function list<T extends z.ZodType>(item: T) {
  return z
    .unknown()
    .optional()
    .transform((v): z.output<T>[] => {
      if (!Array.isArray(v)) return [];
      const out: z.output<T>[] = [];
      for (const el of v) {
        const r = item.safeParse(el);
        if (r.success) out.push(r.data);
      }
      return out;
    });
}

/** A nested object whose fields are all tolerant: a missing or non-object value parses as `{}` would. */
export function nested<S extends z.core.$ZodLooseShape>(shape: S) {
  const schema = z.object(shape);
  return z
    .unknown()
    .optional()
    .transform((v) => schema.parse(v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {}));
}

/** The top level of a JSON response: must be an object (else the upstream answered garbage). */
export function body<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.object(shape);
}
