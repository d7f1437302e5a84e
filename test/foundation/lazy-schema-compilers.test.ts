import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { testConfig } from '../helpers/app.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

describe("Fastify's schema compilers, loaded on first use (lazy-schema-compilers.ts)", () => {
  it('are not loaded by building and starting the whole app', () => {
    // A process of its own: the test runner's module cache would hide what the app loads.
    const script = `
      import { createRequire } from 'node:module';
      import { buildApp } from './src/app.ts';
      import { createPool } from './src/db/pool.ts';
      import { testConfig } from './test/helpers/app.ts';
      const pool = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
      const app = await buildApp(testConfig(null), { pool, logger: false });
      await app.ready();
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({
        ajv: loaded.some((f) => f.includes('/node_modules/ajv/')),
        stringify: loaded.some((f) => f.includes('/node_modules/fast-json-stringify/index.js')),
        fastify: loaded.some((f) => f.includes('/node_modules/fastify/fastify.js')),
      }));
      await app.close();
      await pool.end();
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const lastLine = run.stdout.trim().split('\n').pop()!;
    expect(JSON.parse(lastLine)).toEqual({ ajv: false, stringify: false, fastify: true });
  });

  it('still validate and serialize a route that declares a Fastify schema', async () => {
    const pool = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
    const app = await buildApp(testConfig(null), { pool, logger: false });
    // A route of this test only, with Fastify's own JSON schemas for its query and its answer.
    app.get(
      '/test/schema',
      {
        schema: {
          querystring: {
            type: 'object',
            required: ['n'],
            properties: { n: { type: 'integer', minimum: 1 } },
          },
          response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
        },
      },
      async (request) => ({ n: (request.query as { n: number }).n, notInTheSchema: 'dropped' }),
    );
    const missing = await app.inject({ url: '/test/schema' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toHaveProperty('detail');
    const tooSmall = await app.inject({ url: '/test/schema?n=0' });
    expect(tooSmall.statusCode).toBe(400);
    const ok = await app.inject({ url: '/test/schema?n=7' });
    expect(ok.statusCode).toBe(200);
    // Coerced to an integer by Ajv, and the field the response schema does not name left out by fast-json-stringify.
    expect(ok.body).toBe('{"n":7}');
    await app.close();
    await pool.end();
  });
});
