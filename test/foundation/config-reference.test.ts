import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from '../../src/config/index.js';
import { parseEnvExample, renderReference, schemaDefaults } from '../../scripts/config-reference.js';

/*
 * scripts/config-reference.ts: docs/configuration.md is generated from the
 * config schema and .env.example, and `--check` (run by .ci/run) fails when
 * the three disagree. The failures are proven on doctored copies in a
 * temporary directory; the committed files are never touched.
 */

const tmp = mkdtempSync(path.join(os.tmpdir(), 'sift-config-reference-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const envExample = readFileSync('.env.example', 'utf8');
const reference = readFileSync('docs/configuration.md', 'utf8');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/config-reference.ts', ...args], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let copies = 0;
/** `--check` against a doctored .env.example and/or reference (the real ones unless given). */
function checkCopy(files: { envExample?: string; reference?: string }) {
  const n = ++copies;
  const env = path.join(tmp, `env-${n}`);
  const out = path.join(tmp, `configuration-${n}.md`);
  writeFileSync(env, files.envExample ?? envExample);
  writeFileSync(out, files.reference ?? reference);
  return run('--check', '--env-example', env, '--out', out);
}

describe('configuration reference', () => {
  it('passes --check on the committed files', () => {
    const r = run('--check');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/agree/);
  });

  it('documents every schema variable with its schema default', () => {
    const defaults = schemaDefaults();
    expect([...defaults.keys()]).toEqual(ENV_VARIABLES);
    expect(defaults.get('PORT')).toBe('8000');
    expect(defaults.get('API_THROTTLE_BURST')).toBe('60/min');
    expect(defaults.get('DATABASE_URL')).toBeUndefined();
    for (const name of ENV_VARIABLES) expect(reference, name).toContain(`| \`${name}\` |`);
    expect(reference).toContain('| `PORT` | `8000` | TCP port the HTTP server listens on. |');
    expect(reference).toContain('## Provider credentials');
  });

  it('is what the script generates (the check is not a tautology)', () => {
    expect(renderReference(parseEnvExample(envExample), schemaDefaults())).toBe(reference);
  });

  it('fails when a schema variable is missing from .env.example', () => {
    const doctored = envExample.replace(/^# TCP port.*\nPORT=8000\n/m, '');
    expect(doctored).not.toContain('PORT=');
    const r = checkCopy({ envExample: doctored });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/PORT is in the config schema .* but not in /);
  });

  it('fails when .env.example has a variable the schema does not', () => {
    const r = checkCopy({ envExample: `${envExample}\n# Not a real setting.\nNOT_IN_SCHEMA=1\n` });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/NOT_IN_SCHEMA is in .* but not in the config schema/);
  });

  it("fails when a default in .env.example is not the schema's", () => {
    const r = checkCopy({ envExample: envExample.replace('\nPORT=8000\n', '\nPORT=8080\n') });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`PORT: `);
    expect(r.stderr).toContain(`says "8080", the schema's default is "8000"`);
    const unset = checkCopy({ envExample: envExample.replace('\nDATABASE_URL=\n', '\nDATABASE_URL=postgres://x/y\n') });
    expect(unset.status).toBe(1);
    expect(unset.stderr).toMatch(/DATABASE_URL: .* the schema's default is unset/);
  });

  it('fails when a variable has no description', () => {
    const r = checkCopy({ envExample: envExample.replace('# TCP port the HTTP server listens on.\n', '') });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/PORT has no description/);
  });

  it('fails when docs/configuration.md is stale (a description changed, the reference not regenerated)', () => {
    const r = checkCopy({
      envExample: envExample.replace('TCP port the HTTP server listens on.', 'The port to listen on.'),
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/is out of date .*run npm run config-reference/);
    const edited = checkCopy({ reference: reference.replace('| `HOST` |', '| `HOSTNAME` |') });
    expect(edited.status).toBe(1);
    expect(edited.stderr).toMatch(/out of date \(first difference at line \d+/);
  });

  it('regenerates a reference that then passes --check', () => {
    const out = path.join(tmp, 'regenerated.md');
    const written = run('--out', out);
    expect(written.status, written.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(reference);
    expect(run('--check', '--out', out).status).toBe(0);
  });
});
