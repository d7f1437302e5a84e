import { AccountError, createUser, findUserByName, listUsers, setPassword, setUserActive } from '../../auth/users.js';
import { CliError, type Command } from '../command.js';
import { newPassword } from '../password-input.js';
import { isoOrNever, positionals, userNamed } from './lookup.js';

/** Turns a rejected account operation into a one-line CLI error. */
async function accountStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof AccountError) throw new CliError(err.message);
    throw err;
  }
}

export const createUserCommand: Command = {
  name: 'create-user',
  summary: 'Create a user (asks for the password twice, or reads it with --password-stdin)',
  usage: '<username> [--staff] [--password-stdin]',
  options: { staff: { type: 'boolean' }, 'password-stdin': { type: 'boolean' } },
  async run(ctx, args) {
    const [username] = positionals(args, 1, `create-user ${this.usage}`);
    const pool = await ctx.db();
    if (await findUserByName(pool, username!)) throw new CliError(`A user named '${username}' already exists.`);
    const password = await newPassword(ctx, args.values['password-stdin'] === true);
    const isStaff = args.values.staff === true;
    const user = await accountStep(() => createUser(pool, { username: username!, password, isStaff }));
    ctx.out(`Created ${isStaff ? 'staff user' : 'user'} '${user.username}'.`);
    if (password === null) {
      ctx.out(`No password set: '${user.username}' cannot sign in until you run set-password ${user.username}.`);
    }
  },
};

export const setPasswordCommand: Command = {
  name: 'set-password',
  summary: "Set a user's password (asks twice, or reads it with --password-stdin)",
  usage: '<username> [--password-stdin]',
  options: { 'password-stdin': { type: 'boolean' } },
  async run(ctx, args) {
    const [username] = positionals(args, 1, `set-password ${this.usage}`);
    const pool = await ctx.db();
    const user = await userNamed(pool, username!);
    const password = await newPassword(ctx, args.values['password-stdin'] === true);
    if (password === null) {
      throw new CliError('No password given: use --password-stdin, or run this at a terminal to be asked for it.');
    }
    await accountStep(() => setPassword(pool, user.id, password));
    ctx.out(`Password changed for '${user.username}'. Their web sessions have been signed out.`);
  },
};

function activeSwitch(active: boolean): Command {
  const name = active ? 'enable-user' : 'disable-user';
  return {
    name,
    summary: active
      ? 'Enable a disabled user (their API keys work again)'
      : 'Disable a user: no sign-in, and their API keys stop working',
    usage: '<username>',
    async run(ctx, args) {
      const [username] = positionals(args, 1, `${name} <username>`);
      const pool = await ctx.db();
      const user = await userNamed(pool, username!);
      if (user.isActive === active) {
        ctx.out(`User '${user.username}' is already ${active ? 'enabled' : 'disabled'}.`);
        return;
      }
      await setUserActive(pool, user.id, active);
      ctx.out(
        active
          ? `Enabled user '${user.username}'.`
          : `Disabled user '${user.username}'. Their API keys stop working within 30 seconds.`,
      );
    },
  };
}

export const disableUserCommand = activeSwitch(false);
export const enableUserCommand = activeSwitch(true);

export const listUsersCommand: Command = {
  name: 'list-users',
  summary: 'List users',
  usage: '[--json]',
  options: { json: { type: 'boolean' } },
  async run(ctx, args) {
    positionals(args, 0, `list-users ${this.usage}`);
    const users = await listUsers(await ctx.db());
    if (args.values.json) {
      ctx.out(
        JSON.stringify(
          users.map((u) => ({
            username: u.username,
            is_active: u.isActive,
            is_staff: u.isStaff,
            has_password: u.hasPassword,
            created_at: u.createdAt.toISOString(),
            last_login_at: u.lastLoginAt ? u.lastLoginAt.toISOString() : null,
          })),
          null,
          2,
        ),
      );
      return;
    }
    if (users.length === 0) {
      ctx.out('No users found.');
      return;
    }
    for (const u of users) {
      ctx.out(
        [
          u.username.padEnd(20),
          (u.isActive ? 'active' : 'disabled').padEnd(8),
          (u.isStaff ? 'staff' : '').padEnd(5),
          `created=${u.createdAt.toISOString()}`,
          `last_login=${isoOrNever(u.lastLoginAt)}`,
        ].join('  '),
      );
    }
  },
};
