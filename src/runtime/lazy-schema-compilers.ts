import { createRequire } from 'node:module';

/*
 * Fastify's schema compilers (Ajv for validation, fast-json-stringify for
 * serialization), loaded the first time a route declares a schema instead
 * of when the Fastify instance is made.
 *
 * Why: Fastify requires both on creating an instance, and Ajv alone is 88
 * modules, some 50 ms of every start (each worker's, and each restart's).
 * Sift's routes validate with zod and declare no Fastify schema, so on
 * Sift's own routes neither is ever loaded; a route that declares one
 * still gets Fastify's own compilers, with their defaults.
 *
 * Both packages are Fastify's dependencies, not Sift's: they are resolved
 * from Fastify's own location.
 */

type Factory = (...args: unknown[]) => unknown;

const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));

/** A compiler factory that loads `pkg` (a function returning the factory) on its first call. */
function lazyFactory(pkg: string): Factory {
  let factory: Factory | undefined;
  return (...args) => {
    factory ??= (fromFastify(pkg) as () => Factory)();
    return factory(...args);
  };
}

/** Fastify's `schemaController` option: its default compilers, loaded on first use. */
export function lazySchemaController() {
  return {
    compilersFactory: {
      buildValidator: lazyFactory('@fastify/ajv-compiler'),
      buildSerializer: lazyFactory('@fastify/fast-json-stringify-compiler'),
    },
  };
}
