import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './index.js';

/**
 * The session-signing secret: SECRET_KEY when set, otherwise one generated on
 * first use and kept in DATA_DIR/secret_key (mode 0600) so sessions survive restarts.
 */
export function resolveSecretKey(config: Pick<Config, 'SECRET_KEY' | 'DATA_DIR'>): string {
  if (config.SECRET_KEY) return config.SECRET_KEY;
  const file = path.join(config.DATA_DIR, 'secret_key');
  try {
    const existing = readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch {
    /* not there yet */
  }
  mkdirSync(config.DATA_DIR, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch {
    // another process wrote it first: use theirs
    return readFileSync(file, 'utf8').trim();
  }
}
