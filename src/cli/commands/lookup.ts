import type pg from 'pg';
import { type UserRecord, findUserByName } from '../../auth/users.js';
import { CliError } from '../command.js';

/** The user named on the command line, or a one-line error. */
export async function userNamed(pool: pg.Pool, username: string): Promise<UserRecord> {
  const user = await findUserByName(pool, username);
  if (!user) throw new CliError(`No user named '${username}'.`);
  return user;
}

/** Exactly `count` positional arguments, or the usage line as the error. */
export function positionals(args: { positionals: string[] }, count: number, usage: string): string[] {
  if (args.positionals.length !== count) throw new CliError(`usage: sift ${usage}`);
  return args.positionals;
}

export function isoOrNever(date: Date | null): string {
  return date ? date.toISOString() : 'never';
}
