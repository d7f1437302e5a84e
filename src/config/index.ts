import { existsSync } from 'node:fs';
import path from 'node:path';
import { type Env, envSchema } from './schema.js';

export type { Rate } from './rate.js';
export { ALERT_FORMATS, type AlertFormat, ENV_VARIABLES, namedAlertFormat } from './schema.js';

/** The parsed, validated configuration. Names follow the environment variables. */
export type Config = Env;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

/**
 * Validates an environment (a plain object of strings) into a Config.
 * Throws ConfigError with one line per bad variable.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = envSchema.safeParse(env);
  if (!result.success) {
    const problems = new Map<string, string>();
    for (const issue of result.error.issues) {
      const name = String(issue.path[0] ?? 'environment');
      if (!problems.has(name)) problems.set(name, `${name}: ${issue.message}`);
    }
    throw new ConfigError([...problems.values()]);
  }
  const config = result.data;
  return {
    ...config,
    DATA_DIR: path.resolve(config.DATA_DIR),
    DATABASE_URL: withPassword(config.DATABASE_URL, config.DATABASE_PASSWORD),
  };
}

/**
 * DATABASE_URL with DATABASE_PASSWORD in it, percent-encoded (pg decodes it), so that a password
 * with `@`, `/`, `%` or any other character reaches the server as it is.
 */
function withPassword(databaseUrl: string, password: string): string {
  if (password === '') return databaseUrl;
  const problem = 'DATABASE_PASSWORD: needs DATABASE_URL as a postgres:// or postgresql:// URL';
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    throw new ConfigError([problem]);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new ConfigError([problem]);
  // The setter leaves `%` as it is; encoded first, every character is escaped once.
  url.password = encodeURIComponent(password);
  return url.href;
}

/**
 * The only place that reads process.env: loads `.env` from the working
 * directory when present (real environment variables win), then validates.
 */
export function loadConfig(): Config {
  return loadConfigWith({});
}

/**
 * loadConfig for a stack that brings settings of its own (`npm run demo`):
 * `defaults` apply where the environment (or `.env`) leaves a variable unset
 * or blank, `fixed` whatever it says.
 */
export function loadConfigWith(layers: { defaults?: Record<string, string>; fixed?: Record<string, string> }): Config {
  const envFile = path.resolve('.env');
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [name, value] of Object.entries(layers.defaults ?? {})) {
    if (!env[name]?.trim()) env[name] = value;
  }
  return parseConfig({ ...env, ...layers.fixed });
}

/** Environment variables the test harness reads (kept here so nothing else touches process.env). */
export function testEnvironment(): { databaseUrl: string; keepData: boolean } {
  return {
    databaseUrl: process.env.TEST_DATABASE_URL ?? '',
    keepData: process.env.SIFT_TEST_KEEP_DATA === '1',
  };
}
