import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../helpers/auth.js';
import { verifyPassword } from '../../src/auth/passwords.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('admin CLI', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  function cli(args: string[], stdin?: string): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: db.url, LOG_LEVEL: 'silent' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(stdin ?? '');
    });
  }

  async function passwordHashOf(username: string): Promise<string> {
    const { rows } = await db.pool.query('SELECT password_hash FROM users WHERE username = $1', [username]);
    return rows[0].password_hash;
  }

  it('creates a staff user with a password read from stdin, and refuses a duplicate in any case', async () => {
    const created = await cli(['create-user', 'alice', '--staff', '--password-stdin'], 'correct horse battery\n');
    expect(created).toMatchObject({ code: 0 });
    expect(created.stdout).toContain("Created staff user 'alice'.");
    expect(await verifyPassword(await passwordHashOf('alice'), 'correct horse battery')).toBe(true);
    const { rows } = await db.pool.query('SELECT is_staff, is_active FROM users WHERE username = $1', ['alice']);
    expect(rows[0]).toEqual({ is_staff: true, is_active: true });

    const again = await cli(['create-user', 'ALICE', '--password-stdin'], 'another password\n');
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe("error: A user named 'ALICE' already exists.");
  });

  it('never takes a password as an argument', async () => {
    const res = await cli(['create-user', 'mallory', '--password', 'hunter22hunter']);
    expect(res.code).toBe(1);
    expect(res.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    const { rows } = await db.pool.query('SELECT 1 FROM users WHERE username = $1', ['mallory']);
    expect(rows).toHaveLength(0);
  });

  it('rejects a too-short password from stdin with one line and creates nobody', async () => {
    const res = await cli(['create-user', 'shorty', '--password-stdin'], 'abc\n');
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe('error: The password must be at least 8 characters long.');
    const { rows } = await db.pool.query('SELECT 1 FROM users WHERE username = $1', ['shorty']);
    expect(rows).toHaveLength(0);
  });

  it('creates a user without a password when not at a terminal and no --password-stdin', async () => {
    const res = await cli(['create-user', 'robot']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Created user 'robot'.");
    expect(res.stdout).toContain('cannot sign in');
    expect(await passwordHashOf('robot')).toBe('');
  });

  /** Runs the CLI at a pseudo-terminal (util-linux `script`), answering each prompt as it appears. */
  function cliAtTerminal(args: string[], answers: string[]): Promise<Run> {
    return new Promise((resolve, reject) => {
      const command = ['node', '--import', 'tsx', 'src/cli/main.ts', ...args].join(' ');
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: db.url, LOG_LEVEL: 'silent' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let prompts = 0;
      child.stdout.on('data', (d) => {
        stdout += d;
        const seen = stdout.match(/Password( \(again\))?: /g)?.length ?? 0;
        while (prompts < seen && prompts < answers.length) child.stdin.write(`${answers[prompts++]}\r`);
      });
      child.on('error', reject);
      child.on('close', (code) => {
        child.stdin.end();
        resolve({ code: code ?? -1, stdout, stderr: '' });
      });
    });
  }

  it('asks for the password twice at a terminal without echoing it, and refuses a mismatch', async () => {
    const created = await cliAtTerminal(['create-user', 'typist'], ['typed password 1', 'typed password 1']);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('Password: ');
    expect(created.stdout).toContain('Password (again): ');
    expect(created.stdout).toContain("Created user 'typist'.");
    expect(created.stdout).not.toContain('typed password 1');
    expect(await verifyPassword(await passwordHashOf('typist'), 'typed password 1')).toBe(true);

    const mismatch = await cliAtTerminal(['set-password', 'typist'], ['first attempt 1', 'second attempt 2']);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stdout).toContain('The two passwords do not match.');
    expect(await verifyPassword(await passwordHashOf('typist'), 'typed password 1')).toBe(true);
  });

  it('sets a password and fails with one line for an unknown user', async () => {
    const res = await cli(['set-password', 'robot', '--password-stdin'], 'a brand new secret\r\n');
    expect(res.code).toBe(0);
    expect(await verifyPassword(await passwordHashOf('robot'), 'a brand new secret')).toBe(true);
    const unknown = await cli(['set-password', 'nobody', '--password-stdin'], 'whatever123\n');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("error: No user named 'nobody'.");
    const noInput = await cli(['set-password', 'robot']);
    expect(noInput.code).toBe(1);
    expect(noInput.stderr).toMatch(/--password-stdin/);
  });

  it('issues a key printed alone on its own line with a shown-once warning, and it authenticates', async () => {
    const res = await cli(['create-api-key', 'alice', '--name', 'laptop']);
    expect(res.code).toBe(0);
    const lines = res.stdout.split('\n');
    expect(lines[0]).toBe('Created API key "laptop" for alice.');
    const keyLines = lines.filter((l) => l.startsWith('svc_sk_'));
    expect(keyLines).toHaveLength(1);
    const key = keyLines[0]!;
    expect(key).toMatch(/^svc_sk_[0-9a-f]{8}\.[A-Za-z0-9_-]{43}$/);
    expect(res.stdout).toMatch(/shown only once/);
    const outcome = await authenticate(db.pool, key);
    expect(outcome).toMatchObject({ kind: 'ok', principal: { username: 'alice', prefix: key.slice(7, 15) } });
    const { rows } = await db.pool.query('SELECT secret_hash, name FROM api_keys WHERE prefix = $1', [
      key.slice(7, 15),
    ]);
    expect(rows[0].name).toBe('laptop');
    expect(Buffer.from(rows[0].secret_hash).toString('utf8')).not.toContain(key.split('.')[1]);
  });

  it('names a key "CLI key" by default and refuses an unknown user', async () => {
    const res = await cli(['create-api-key', 'robot']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Created API key "CLI key" for robot.');
    const unknown = await cli(['create-api-key', 'ghost']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("error: No user named 'ghost'.");
  });

  it('lists keys newest first with state, owner, last use and name; filters by user; --json', async () => {
    const all = await cli(['list-api-keys']);
    expect(all.code).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^svc_sk_[0-9a-f]{8} {2}active {3}robot +used=never {2}CLI key$/);
    expect(lines[1]).toMatch(/^svc_sk_[0-9a-f]{8} {2}active {3}alice +used=never {2}laptop$/);
    expect(all.stdout).not.toMatch(/\.[A-Za-z0-9_-]{43}/);

    const alices = await cli(['list-api-keys', '--user', 'alice', '--json']);
    const parsed = JSON.parse(alices.stdout);
    expect(parsed).toHaveLength(1);
    expect(parsed[0]).toMatchObject({
      username: 'alice',
      name: 'laptop',
      state: 'active',
      revoked: false,
      last_used_at: null,
    });
    expect(parsed[0].prefix).toMatch(/^svc_sk_[0-9a-f]{8}$/);

    const unknown = await cli(['list-api-keys', '--user', 'ghost']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("error: No user named 'ghost'.");
  });

  it('revokes by bare prefix, branded prefix or full key, and says so when already revoked', async () => {
    const issue = async () => {
      const res = await cli(['create-api-key', 'robot', '--name', 'temp']);
      return res.stdout.split('\n').find((l) => l.startsWith('svc_sk_'))!;
    };
    const [a, b, c] = [await issue(), await issue(), await issue()];
    for (const reference of [a.slice(7, 15), b.slice(0, 15), c]) {
      const res = await cli(['revoke-api-key', reference]);
      expect(res.code, reference).toBe(0);
      expect(res.stdout.trim()).toMatch(/^Revoked key svc_sk_[0-9a-f]{8} \("temp"\) for robot\.$/);
      expect(res.stdout).not.toContain(c.split('.')[1]);
    }
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM api_keys WHERE name = $1 AND revoked_at IS NOT NULL',
      ['temp'],
    );
    expect(rows[0].n).toBe(3);
    expect((await authenticate(db.pool, c)).kind).toBe('invalid');

    const again = await cli(['revoke-api-key', a.slice(0, 15)]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(`Key ${a.slice(0, 15)} is already revoked.`);

    const unknown = await cli(['revoke-api-key', 'svc_sk_00000000.secretpartthatmustnotbeechoed']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("error: No API key with prefix 'svc_sk_00000000'.");
    expect(unknown.stderr).not.toContain('secretpart');

    const listed = await cli(['list-api-keys', '--user', 'robot']);
    expect(listed.stdout.split('\n').filter((l) => l.includes(' revoked '))).toHaveLength(3);
  });

  it('disables and enables a user: the key is refused with "disabled" and then accepted again', async () => {
    const created = await cli(['create-api-key', 'alice', '--name', 'toggle']);
    const key = created.stdout.split('\n').find((l) => l.startsWith('svc_sk_'))!;
    const disabled = await cli(['disable-user', 'alice']);
    expect(disabled).toMatchObject({ code: 0, stderr: '' });
    expect(disabled.stdout).toContain("Disabled user 'alice'.");
    expect((await authenticate(db.pool, key)).kind).toBe('disabled');
    const twice = await cli(['disable-user', 'alice']);
    expect(twice.stdout.trim()).toBe("User 'alice' is already disabled.");
    const enabled = await cli(['enable-user', 'alice']);
    expect(enabled.code).toBe(0);
    expect(enabled.stdout.trim()).toBe("Enabled user 'alice'.");
    expect((await authenticate(db.pool, key)).kind).toBe('ok');
    const unknown = await cli(['disable-user', 'ghost']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("error: No user named 'ghost'.");
  });

  it('lists users as text and as JSON', async () => {
    await cli(['disable-user', 'robot']);
    const text = await cli(['list-users']);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    const lines = text.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^alice +active {4}staff {2}created=\S+Z {2}last_login=never$/);
    expect(lines[1]).toMatch(/^robot +disabled {2}\s{5} {2}created=/);
    expect(lines[2]).toMatch(/^typist +active /);
    const json = JSON.parse((await cli(['list-users', '--json'])).stdout);
    expect(json).toEqual([
      expect.objectContaining({ username: 'alice', is_active: true, is_staff: true, last_login_at: null }),
      expect.objectContaining({ username: 'robot', is_active: false, is_staff: false }),
      expect.objectContaining({ username: 'typist', is_active: true, has_password: true }),
    ]);
    expect(JSON.stringify(json)).not.toContain('argon2');
  });
});
