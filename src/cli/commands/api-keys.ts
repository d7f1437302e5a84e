import { findApiKeyByPrefix, issueApiKey, listApiKeys, revokeApiKey } from '../../auth/api-keys.js';
import { displayPrefix, parsePrefixReference } from '../../auth/key-format.js';
import { AccountError } from '../../auth/users.js';
import { CliError, type Command } from '../command.js';
import { isoOrNever, positionals, userNamed } from './lookup.js';

export const CLI_KEY_NAME = 'CLI key';

export const createApiKeyCommand: Command = {
  name: 'create-api-key',
  summary: 'Issue an API key to a user (the key is printed once)',
  usage: '<username> [--name NAME]',
  options: { name: { type: 'string' } },
  async run(ctx, args) {
    const [username] = positionals(args, 1, `create-api-key ${this.usage}`);
    const pool = await ctx.db();
    const user = await userNamed(pool, username!);
    const requested = args.values.name;
    let issued: { key: string; id: number };
    try {
      issued = await issueApiKey(pool, user.id, typeof requested === 'string' ? requested : CLI_KEY_NAME);
    } catch (err) {
      if (err instanceof AccountError) throw new CliError(err.message);
      throw err;
    }
    const record = (await listApiKeys(pool, { userId: user.id })).find((k) => k.id === issued.id)!;
    ctx.out(`Created API key "${record.name}" for ${user.username}.`);
    ctx.out();
    ctx.out(issued.key);
    ctx.out();
    ctx.out('Store this key now - it is shown only once and cannot be recovered.');
  },
};

export const listApiKeysCommand: Command = {
  name: 'list-api-keys',
  summary: 'List API keys, newest first (never their secrets)',
  usage: '[--user USERNAME] [--json]',
  options: { user: { type: 'string' }, json: { type: 'boolean' } },
  async run(ctx, args) {
    positionals(args, 0, `list-api-keys ${this.usage}`);
    const pool = await ctx.db();
    const username = args.values.user;
    const userId = typeof username === 'string' ? (await userNamed(pool, username)).id : undefined;
    const keys = await listApiKeys(pool, { userId });
    if (args.values.json) {
      ctx.out(
        JSON.stringify(
          keys.map((k) => ({
            prefix: k.displayPrefix,
            state: k.revokedAt ? 'revoked' : 'active',
            revoked: k.revokedAt !== null,
            username: k.username,
            name: k.name,
            created_at: k.createdAt.toISOString(),
            last_used_at: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
            revoked_at: k.revokedAt ? k.revokedAt.toISOString() : null,
          })),
          null,
          2,
        ),
      );
      return;
    }
    if (keys.length === 0) {
      ctx.out('No API keys found.');
      return;
    }
    for (const k of keys) {
      ctx.out(
        [
          k.displayPrefix,
          (k.revokedAt ? 'revoked' : 'active').padEnd(7),
          k.username.padEnd(20),
          `used=${isoOrNever(k.lastUsedAt)}`,
          k.name,
        ].join('  '),
      );
    }
  },
};

export const revokeApiKeyCommand: Command = {
  name: 'revoke-api-key',
  summary: 'Revoke an API key, named by its prefix, svc_sk_ prefix, or the full key',
  usage: '<prefix | svc_sk_prefix | full key>',
  async run(ctx, args) {
    const [reference] = positionals(args, 1, `revoke-api-key ${this.usage}`);
    const prefix = parsePrefixReference(reference!);
    // Echo only what precedes the secret, never the secret itself.
    const shown = prefix ? displayPrefix(prefix) : reference!.split('.', 1)[0]!.slice(0, 40);
    if (!prefix) throw new CliError(`No API key with prefix '${shown}'.`);
    const pool = await ctx.db();
    const key = await findApiKeyByPrefix(pool, prefix);
    if (!key) throw new CliError(`No API key with prefix '${shown}'.`);
    if (key.revokedAt || !(await revokeApiKey(pool, key.id))) {
      ctx.out(`Key ${key.displayPrefix} is already revoked.`);
      return;
    }
    ctx.out(`Revoked key ${key.displayPrefix} ("${key.name}") for ${key.username}.`);
  },
};
