/*
 * JSON text of a value that JSON.parse gives back as it was, or undefined when it would not be (the
 * shared cache level shares only such values: shared-cache.ts). Plain data is strings, finite
 * numbers, booleans, null, arrays of them and objects of them whose prototype is Object's (or
 * none). A Date (it comes back a string), a Map or a class instance (an object without its
 * methods), a function, a bigint, an undefined or NaN inside an array (null) is not.
 */

class NotPlain extends Error {}

function check(this: unknown, key: string, value: unknown): unknown {
  const raw = (this as Record<string, unknown>)[key];
  switch (typeof raw) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(raw)) throw new NotPlain();
      return value;
    case 'undefined':
      // An absent property is dropped and comes back absent; in an array it would come back null.
      if (Array.isArray(this)) throw new NotPlain();
      return value;
    case 'object': {
      if (raw === null || Array.isArray(raw)) return value;
      const proto = Object.getPrototypeOf(raw) as unknown;
      if (proto !== Object.prototype && proto !== null) throw new NotPlain();
      return value;
    }
    default:
      throw new NotPlain();
  }
}

export function plainJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value, check);
  } catch (err) {
    if (err instanceof NotPlain) return undefined;
    throw err;
  }
}
