import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { cgroupCpuLimit, usableCores } from '../../src/config/cores.js';
import pg from 'pg';
import { ConfigError, ENV_VARIABLES, parseConfig } from '../../src/config/index.js';
import { createTestDatabase } from '../helpers/db.js';

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('configuration', () => {
  it('gives the documented defaults for an empty environment', () => {
    const c = parseConfig({});
    expect(c.PORT).toBe(8000);
    // This machine only: the Docker image and compose file set 0.0.0.0 themselves.
    expect(c.HOST).toBe('127.0.0.1');
    expect(c.LOG_LEVEL).toBe('info');
    expect(c.DATABASE_URL).toBe('');
    expect(c.DATA_DIR.endsWith('/data')).toBe(true);
    expect(c.TRUST_PROXY).toBe(false);
    expect(c.API_THROTTLE_BURST).toEqual({ limit: 60, windowSeconds: 60, text: '60/min' });
    expect(c.API_THROTTLE_SUSTAINED).toEqual({ limit: 5000, windowSeconds: 86400, text: '5000/day' });
  });

  it('treats empty values as unset', () => {
    expect(parseConfig({ PORT: '', LOG_LEVEL: ' ' }).PORT).toBe(8000);
  });

  it('names every bad variable on its own line and says why', () => {
    const lines = problems({
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      API_THROTTLE_BURST: '10/fortnight',
      STATUS_PAGE_ENABLED: 'maybe',
    });
    expect(lines).toHaveLength(4);
    expect(lines.find((l) => l.startsWith('PORT:'))).toMatch(/integer/);
    expect(lines.find((l) => l.startsWith('LOG_LEVEL:'))).toMatch(/one of/);
    expect(lines.find((l) => l.startsWith('API_THROTTLE_BURST:'))).toMatch(/period/);
    expect(lines.find((l) => l.startsWith('STATUS_PAGE_ENABLED:'))).toMatch(/true or false/);
  });

  it('rejects out-of-range ports, short secrets and non-http base URLs', () => {
    expect(problems({ PORT: '70000' })[0]).toMatch(/^PORT:/);
    expect(problems({ PORT: '-1' })[0]).toMatch(/^PORT:/);
    expect(problems({ SECRET_KEY: 'short' })[0]).toMatch(/^SECRET_KEY: .*32/);
    expect(problems({ BRAVE_BASE_URL: 'ftp://x' })[0]).toMatch(/^BRAVE_BASE_URL:/);
  });

  it('parses TRUST_PROXY as a boolean, a hop count or an address list', () => {
    expect(parseConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(parseConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(parseConfig({ TRUST_PROXY: '10.0.0.0/8,127.0.0.1' }).TRUST_PROXY).toBe('10.0.0.0/8,127.0.0.1');
  });

  it('reads LOG_FORMAT as auto by default, json or pretty in any case, and names anything else', () => {
    expect(parseConfig({}).LOG_FORMAT).toBe('auto');
    expect(parseConfig({ LOG_FORMAT: 'JSON' }).LOG_FORMAT).toBe('json');
    expect(parseConfig({ LOG_FORMAT: ' pretty ' }).LOG_FORMAT).toBe('pretty');
    expect(problems({ LOG_FORMAT: 'colour' })).toEqual(['LOG_FORMAT: must be auto, json or pretty (got "colour")']);
  });

  it('puts DATABASE_PASSWORD into DATABASE_URL escaped, so pg reads back every character', () => {
    const password = ' p@ss:w/rd%41#?&= é ';
    const c = parseConfig({ DATABASE_URL: 'postgres://sift@postgres:5432/sift', DATABASE_PASSWORD: password });
    const url = new URL(c.DATABASE_URL);
    expect([url.username, url.hostname, url.port, url.pathname]).toEqual(['sift', 'postgres', '5432', '/sift']);
    // How pg (pg-connection-string) reads a URL's password: percent-decoded.
    expect(decodeURIComponent(url.password)).toBe(password);
    // It replaces a password written in the URL; without it the URL stays as it is.
    expect(parseConfig({ DATABASE_URL: 'postgresql://u:old@db/x', DATABASE_PASSWORD: 'new' }).DATABASE_URL).toBe(
      'postgresql://u:new@db/x',
    );
    expect(parseConfig({ DATABASE_URL: 'postgres://u:p@db/x' }).DATABASE_URL).toBe('postgres://u:p@db/x');
  });

  it('refuses DATABASE_PASSWORD without a postgres:// DATABASE_URL, without echoing the password', () => {
    for (const DATABASE_URL of ['', 'host=db user=sift', 'mysql://u@db/x']) {
      const lines = problems({ DATABASE_URL, DATABASE_PASSWORD: 'hunter2-secret' });
      expect(lines, DATABASE_URL).toEqual([
        'DATABASE_PASSWORD: needs DATABASE_URL as a postgres:// or postgresql:// URL',
      ]);
    }
  });

  it('reads WORKERS as one per core by default, a count from 1 to 64, or auto', () => {
    expect(parseConfig({}).WORKERS).toBe(Math.min(64, usableCores()));
    expect(parseConfig({ WORKERS: '1' }).WORKERS).toBe(1);
    expect(parseConfig({ WORKERS: '4' }).WORKERS).toBe(4);
    expect(parseConfig({ WORKERS: 'AUTO' }).WORKERS).toBe(Math.min(64, usableCores()));
    for (const bad of ['0', '65', '-1', '2.5', 'many']) {
      expect(() => parseConfig({ WORKERS: bad }), bad).toThrow(ConfigError);
    }
  });

  it('counts a container CPU quota in WORKERS=auto (cgroup v2 cpu.max, v1 CFS quota), not only the CPUs', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'sift-cgroup-'));
    const file = (name: string, text: string) => {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), text);
    };
    try {
      expect(cgroupCpuLimit(root)).toBeUndefined();
      file('cpu/cpu.cfs_quota_us', '-1\n');
      file('cpu/cpu.cfs_period_us', '100000\n');
      expect(cgroupCpuLimit(root)).toBeUndefined();
      file('cpu/cpu.cfs_quota_us', '150000\n');
      expect(cgroupCpuLimit(root)).toBe(2);
      // v2 wins where both are present.
      file('cpu.max', 'max 100000\n');
      expect(cgroupCpuLimit(root)).toBeUndefined();
      file('cpu.max', '100000 100000\n');
      expect(cgroupCpuLimit(root)).toBe(1);
      expect(usableCores(root)).toBe(1);
      file('cpu.max', `${1000 * 100000} 100000\n`);
      expect(usableCores(root)).toBe(availableParallelism());
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lists every variable in .env.example with an explanation', () => {
    const text = readFileSync('.env.example', 'utf8').split('\n');
    for (const name of ENV_VARIABLES) {
      const i = text.findIndex((l) => l.startsWith(`${name}=`));
      expect(i, `${name} missing from .env.example`).toBeGreaterThan(0);
      expect(text[i - 1]?.startsWith('#'), `${name} has no explanation line`).toBe(true);
    }
    const listed = text.filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.split('=')[0]);
    expect(new Set(listed)).toEqual(new Set(ENV_VARIABLES));
  });

  it('makes the server exit 1 naming PORT when PORT=abc', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, PORT: 'abc', DATA_DIR: 'data/never-used' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^PORT: must be an integer/m);
  });
});

describe('DATABASE_PASSWORD against a real server', () => {
  it('connects as a role whose password holds URL delimiters', async () => {
    const db = await createTestDatabase();
    const role = `sift_pw_${db.name.slice(-12)}`;
    const password = 'p@ss:w/rd%41#?';
    try {
      await db.pool.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      const url = new URL(db.url);
      url.username = role;
      url.password = '';
      const config = parseConfig({ DATABASE_URL: url.href, DATABASE_PASSWORD: password });
      const client = new pg.Client({ connectionString: config.DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT current_user AS who, current_database() AS db');
        expect(rows[0]).toEqual({ who: role, db: db.name });
      } finally {
        await client.end();
      }
    } finally {
      await db.drop();
      // Roles belong to the whole server, not to the test's database.
      const admin = new pg.Client({ connectionString: inject('adminUrl') });
      await admin.connect();
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });
});
