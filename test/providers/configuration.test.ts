import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { testConfig } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { ALL_PROVIDER_SLUGS } from '../helpers/providers.js';

/* A fresh instance says what it lacks: one start-up line per group, and `sift providers`. */

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: 'data/test-cli-providers', ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('sift providers', () => {
  it('prints every provider with configured, or the missing key, or disabled, and the base URL host', async () => {
    const { code, out } = await cli(['providers'], {
      MARGINALIA_API_KEY: 'public',
      DISABLED_PROVIDERS: 'provider_06',
      NOMINATIM_BASE_URL: 'https://maps.example.org/nominatim',
    });
    expect(code).toBe(0);
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^SLUG +NAME +GROUP +CONFIGURED +BASE URL HOST$/);
    expect(lines).toHaveLength(17);
    expect(lines.find((l) => l.startsWith('provider_01'))).toMatch(
      /engine +no key \(BRAVE_API_KEY\) +api\.search\.brave\.com$/,
    );
    expect(lines.find((l) => l.startsWith('provider_03'))).toMatch(
      /Marginalia +engine +yes +api2\.marginalia-search\.com$/,
    );
    expect(lines.find((l) => l.startsWith('provider_06'))).toMatch(/disabled \(DISABLED_PROVIDERS\)/);
    expect(lines.find((l) => l.startsWith('provider_13'))).toMatch(/yes +maps\.example\.org$/);
    expect(lines.find((l) => l.startsWith('translate'))).toMatch(/no URL \(LIBRETRANSLATE_URL\)$/);
  });

  it('ends quietly with status 0 when its reader has gone (sift providers | head -0)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'providers'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: 'data/test-cli-providers' },
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    // The reader goes away before the first line is written.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(err).not.toContain('EPIPE');
    expect(code).toBe(0);
  });

  it('prints the same as JSON with --json', async () => {
    const { code, out } = await cli(['providers', '--json'], { BRAVE_API_KEY: 'k' });
    expect(code).toBe(0);
    const rows = JSON.parse(out) as Record<string, unknown>[];
    expect(rows.map((r) => r.slug)).toEqual(ALL_PROVIDER_SLUGS);
    expect(rows[0]).toEqual({
      slug: 'provider_01',
      name: 'Brave Search',
      group: 'engine',
      configured: true,
      reason: '',
      base_url_host: 'api.search.brave.com',
    });
    expect(rows[1]).toMatchObject({ slug: 'provider_02', configured: false, reason: 'no key (MOJEEK_API_KEY)' });
  });
});

describe('start-up log', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('logs one line per provider group saying what is configured and what is not, and why', async () => {
    const lines: { msg: string; group?: string }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger;
    const pool = createPool(db.url);
    const app = await buildApp(
      testConfig(db, { LOG_LEVEL: 'info', STAAN_API_KEY: 'k', DISABLED_PROVIDERS: 'weather' }),
      {
        pool,
        logger,
      },
    );
    try {
      await app.ready();
      const groups = lines.filter((l) => l.msg.startsWith('providers '));
      expect(groups.map((l) => l.group)).toEqual(['engine', 'media', 'cards', 'instant', 'maps', 'translate']);
      expect(groups[0]!.msg).toBe(
        'providers engine: configured provider_04 (Staan); not configured provider_01 (Brave Search): no key (BRAVE_API_KEY), ' +
          'provider_02 (Mojeek): no key (MOJEEK_API_KEY), provider_03 (Marginalia): no key (MARGINALIA_API_KEY)',
      );
      expect(groups[3]!.msg).toBe(
        'providers instant: configured currency (Frankfurter); not configured weather (Open-Meteo): disabled (DISABLED_PROVIDERS)',
      );
      expect(groups[5]!.msg).toBe(
        'providers translate: configured none; not configured translate (LibreTranslate): no URL (LIBRETRANSLATE_URL)',
      );
    } finally {
      await app.close();
      await pool.end();
    }
  });
});
