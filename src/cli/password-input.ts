import readline from 'node:readline/promises';
import { Writable } from 'node:stream';
import { CliError, type CliContext } from './command.js';

/*
 * Reading a password for the CLI: never from an argument. Either the first
 * line of standard input (--password-stdin), or typed twice at a terminal
 * with echo off.
 */

export async function readPasswordFromStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.includes('\n')) break;
  }
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  if (!line) throw new CliError('No password on standard input.');
  return line;
}

/** Asks twice at a terminal, echo off; the two entries must match. Ctrl-C cancels. */
export async function promptNewPassword(ctx: CliContext): Promise<string> {
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = readline.createInterface({ input: ctx.stdin, output: muted, terminal: Boolean(ctx.stdin.isTTY) });
  rl.on('SIGINT', () => rl.close());
  // One interface and its line buffer for both questions, so typed-ahead input is not lost.
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (question: string): Promise<string> => {
    process.stderr.write(question);
    const line = await lines.next();
    process.stderr.write('\n');
    if (line.done) throw new CliError('Cancelled.');
    return line.value;
  };
  try {
    const first = await ask('Password: ');
    const second = await ask('Password (again): ');
    if (first !== second) throw new CliError('The two passwords do not match.');
    if (!first) throw new CliError('The password is empty.');
    return first;
  } finally {
    rl.close();
  }
}

/**
 * The new password the operator gives: from stdin with --password-stdin, by
 * prompting at a terminal, or null when neither is possible.
 */
export async function newPassword(ctx: CliContext, fromStdin: boolean): Promise<string | null> {
  if (fromStdin) return readPasswordFromStdin(ctx.stdin);
  if (ctx.stdin.isTTY) return promptNewPassword(ctx);
  return null;
}
