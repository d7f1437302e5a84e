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
  return { ...config, DATA_DIR: path.resolve(config.DATA_DIR) };
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
