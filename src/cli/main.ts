#!/usr/bin/env node
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { ConfigError, loadConfig } from '../config/index.js';
import { type Database, openDatabase } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { type CliContext, CliError, type Command } from './command.js';
import { commands } from './commands/index.js';

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'Usage: sift <command> [arguments]   (npm run cli -- <command> [arguments])',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `sift <command> --help` for a command's arguments.",
  ].join('\n');
}

function commandUsage(c: Command): string {
  const opts = Object.entries(c.options ?? {}).map(
    ([name, o]) => `  --${name}${o.type === 'string' ? ' <value>' : ''}`,
  );
  return [
    `Usage: sift ${c.name} ${c.usage}`.trimEnd(),
    '',
    c.summary,
    ...(opts.length ? ['', 'Options:', ...opts] : []),
  ].join('\n');
}

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 1;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`error: unknown command "${name}". Run \`sift --help\` for the list.\n`);
    return 1;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${commandUsage(command)}\n`);
    return 0;
  }

  let database: Database | undefined;
  try {
    const args = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: true, strict: true });
    const config = loadConfig();
    const ctx: CliContext = {
      config,
      async db(): Promise<pg.Pool> {
        if (!database) {
          database = await openDatabase(config);
          if (!command.noAutoMigrate) await migrate(database.pool);
        }
        return database.pool;
      },
      out: (line = '') => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
      stdin: process.stdin,
    };
    await command.run(ctx, args as { positionals: string[]; values: Record<string, string | boolean | undefined> });
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const line of err.problems) process.stderr.write(`${line}\n`);
    } else if (err instanceof CliError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`error: ${(err as Error).message}\n`);
    } else {
      process.stderr.write(`error: ${(err as Error).message ?? String(err)}\n`);
    }
    return 1;
  } finally {
    await database?.close();
  }
}

// Output piped into a reader that stops early (`sift providers | head`) ends the command quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2));
