import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_ARGS, NO_CHROMIUM_MESSAGE, resolveChromium } from './browser.js';

/** Which Chromium the browser tests get: CHROMIUM_PATH, then an installed one, then the npm-shipped one. */
describe('resolveChromium', () => {
  let dir: string;
  let fakeChrome: string;
  let otherChrome: string;
  let notExecutable: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sift-browser-test-'));
    fakeChrome = path.join(dir, 'chrome');
    otherChrome = path.join(dir, 'other-chrome');
    notExecutable = path.join(dir, 'not-executable');
    for (const file of [fakeChrome, otherChrome]) {
      writeFileSync(file, '#!/bin/sh\n');
      chmodSync(file, 0o755);
    }
    writeFileSync(notExecutable, '');
    chmodSync(notExecutable, 0o644);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const withoutEnvPath = () => ({ ...process.env, CHROMIUM_PATH: undefined });

  it('fails in one line when CHROMIUM_PATH names a missing file, instead of falling back', async () => {
    const missing = path.join(dir, 'no-such-chromium');
    const error = await resolveChromium({
      env: { ...process.env, CHROMIUM_PATH: missing },
      systemCandidates: [fakeChrome],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toBe(`CHROMIUM_PATH is ${missing}, which does not exist: point it at a Chromium or unset it`);
    expect(message).not.toContain('\n');
  });

  it('fails in one line when CHROMIUM_PATH names a file that is not executable', async () => {
    await expect(resolveChromium({ env: { CHROMIUM_PATH: notExecutable }, systemCandidates: [] })).rejects.toThrow(
      `CHROMIUM_PATH is ${notExecutable}, which is not an executable file`,
    );
  });

  it('takes CHROMIUM_PATH before an installed browser', async () => {
    const found = await resolveChromium({ env: { CHROMIUM_PATH: otherChrome }, systemCandidates: [fakeChrome] });
    expect(found).toEqual({ executablePath: otherChrome, source: 'env', args: [...BASE_ARGS], env: {} });
  });

  it('takes the first installed browser when CHROMIUM_PATH is unset or empty, skipping missing ones', async () => {
    const candidates = [path.join(dir, 'missing'), notExecutable, fakeChrome, otherChrome];
    for (const env of [withoutEnvPath(), { ...process.env, CHROMIUM_PATH: '' }]) {
      const found = await resolveChromium({ env, systemCandidates: candidates });
      expect(found).toMatchObject({ executablePath: fakeChrome, source: 'system', args: [...BASE_ARGS] });
    }
  });

  it('falls back to the Chromium shipped by @sparticuz/chromium on Linux x64, with flags that keep pages apart', async () => {
    const attempt = resolveChromium({ env: withoutEnvPath(), systemCandidates: [] });
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      await expect(attempt).rejects.toThrow(NO_CHROMIUM_MESSAGE);
      return;
    }
    const found = await attempt;
    expect(found.source).toBe('npm');
    accessSync(found.executablePath, constants.X_OK);
    expect(found.args.slice(0, BASE_ARGS.length)).toEqual([...BASE_ARGS]);
    for (const flag of ['--single-process', '--disable-web-security', '--allow-running-insecure-content']) {
      expect(found.args).not.toContain(flag);
    }
    expect(found.args.some((arg) => arg.startsWith('--headless') || arg.startsWith('--disable-features'))).toBe(false);
    expect(found.env.FONTCONFIG_FILE).toBeDefined();
  });

  it('says what to install, in one line, when no browser can be had', async () => {
    await expect(
      resolveChromium({ env: withoutEnvPath(), systemCandidates: [], bundledPackage: '@sift-test/no-such-chromium' }),
    ).rejects.toThrow(new Error(NO_CHROMIUM_MESSAGE));
    expect(NO_CHROMIUM_MESSAGE).not.toContain('\n');
  });

  it('finds an existing executable with the default search when CHROMIUM_PATH is unset', async () => {
    const found = await resolveChromium({ env: withoutEnvPath() });
    accessSync(found.executablePath, constants.X_OK);
  });
});
