import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  // Written whole under a name of its own, then linked into place: replicas starting together on one
  // DATA_DIR (docker-compose.yml) never read a file another is still writing, and all keep one secret.
  const own = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(own, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(own, file);
    return secret;
  } catch (err) {
    // Another process linked its secret first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    // A file system without hard links: written in place, still only by the first.
    try {
      writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
      return secret;
    } catch {
      return readFileSync(file, 'utf8').trim();
    }
  } finally {
    rmSync(own, { force: true });
  }
}
