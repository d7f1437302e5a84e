import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveSecretKey } from '../../src/config/secret-key.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** A process of its own that resolves the secret in `dataDir` and prints it. */
function resolveInProcess(dataDir: string): Promise<string> {
  const script = `
    const { resolveSecretKey } = await import(${JSON.stringify(path.join(root, 'src/config/secret-key.ts'))});
    process.stdout.write(resolveSecretKey({ SECRET_KEY: '', DATA_DIR: ${JSON.stringify(dataDir)} }));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
  });
}

describe('the generated session secret', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sift-secret-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is SECRET_KEY when set, and nothing is written', () => {
    const key = 'k'.repeat(40);
    expect(resolveSecretKey({ SECRET_KEY: key, DATA_DIR: dataDir })).toBe(key);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('is generated once into DATA_DIR/secret_key (mode 0600) and read back on the next start', () => {
    const first = resolveSecretKey({ SECRET_KEY: '', DATA_DIR: dataDir });
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(path.join(dataDir, 'secret_key'), 'utf8')).toBe(`${first}\n`);
    expect(statSync(path.join(dataDir, 'secret_key')).mode & 0o777).toBe(0o600);
    expect(resolveSecretKey({ SECRET_KEY: '', DATA_DIR: dataDir })).toBe(first);
    expect(readdirSync(dataDir)).toEqual(['secret_key']);
  });

  it('is the same for processes starting together on one DATA_DIR (replicas on a shared volume)', async () => {
    const secrets = await Promise.all(Array.from({ length: 6 }, () => resolveInProcess(dataDir)));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]!.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(path.join(dataDir, 'secret_key'), 'utf8')).toBe(`${secrets[0]}\n`);
    // No process's own copy is left behind.
    expect(readdirSync(dataDir)).toEqual(['secret_key']);
  });
});
