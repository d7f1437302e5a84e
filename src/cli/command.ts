import type { ParseArgsConfig } from 'node:util';
import type pg from 'pg';
import type { Config } from '../config/index.js';

/** What a command gets: the config, a database (opened on first use), and its output streams. */
export interface CliContext {
  config: Config;
  db(): Promise<pg.Pool>;
  out(line?: string): void;
  err(line: string): void;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export interface Command {
  name: string;
  summary: string;
  /** Usage line after the command name, e.g. `<username> [--staff]`. */
  usage: string;
  options?: ParseArgsConfig['options'];
  /** Commands open the database already migrated unless this is set (the migrate command itself). */
  noAutoMigrate?: boolean;
  run(
    ctx: CliContext,
    args: { positionals: string[]; values: Record<string, string | boolean | undefined> },
  ): Promise<void>;
}

/** An expected failure: printed as one line, exit status 1. */
export class CliError extends Error {
  override name = 'CliError';
}
