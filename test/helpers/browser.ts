import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';

export const ARTIFACTS_DIR = path.resolve('test-artifacts');

/** The one line a developer sees when no browser can be had. */
export const NO_CHROMIUM_MESSAGE =
  'No Chromium found: set CHROMIUM_PATH, install chromium, or run npm ci to get @sparticuz/chromium';

/** The npm package that ships a headless Chromium (a devDependency). */
export const BUNDLED_CHROMIUM_PACKAGE = '@sparticuz/chromium';

/** Flags every browser gets: headless on a sandboxed machine, no network chatter, no GPU. */
export const BASE_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * Flags @sparticuz/chromium recommends that are left out:
 * - --single-process: made for Lambda; one crashing page takes the browser down with it.
 * - --headless=...: Playwright passes --headless itself.
 * - --disable-features / --enable-features: Chromium keeps only the last one, so they would
 *   drop the feature list Playwright passes (PaintHolding, HttpsUpgrades, ...).
 * - --disable-web-security, --allow-running-insecure-content, --disable-site-isolation-trials:
 *   the tests must see the same-origin policy, CSP and mixed-content rules a user's browser applies.
 */
const DROPPED_BUNDLED_FLAGS = [
  '--single-process',
  '--headless',
  '--disable-features',
  '--enable-features',
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
];

/** Names looked up on PATH, then fixed locations, in this order. */
const SYSTEM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];
const SYSTEM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
  '/snap/bin/chromium',
  '/opt/google/chrome/chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

export interface ResolvedChromium {
  executablePath: string;
  /** env: CHROMIUM_PATH; system: installed on the machine; npm: shipped by @sparticuz/chromium. */
  source: 'env' | 'system' | 'npm';
  /** Flags to launch it with (BASE_ARGS, plus what @sparticuz recommends for its build). */
  args: string[];
  /** Variables to add to the browser's environment (fonts, bundled libraries). */
  env: Record<string, string>;
}

export interface ResolveOptions {
  /** Where CHROMIUM_PATH and PATH are read from; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Installed executables to try after CHROMIUM_PATH; PATH lookups then the usual locations by default. */
  systemCandidates?: string[];
  /** The package shipping Chromium; BUNDLED_CHROMIUM_PACKAGE by default. */
  bundledPackage?: string;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What `which` would find for each name, then the usual install locations. */
export function systemChromiumCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const onPath = SYSTEM_NAMES.flatMap((name) => dirs.map((dir) => path.join(dir, name)));
  return [...new Set([...onPath, ...SYSTEM_PATHS])];
}

/**
 * Finds a Chromium to test with, in this order:
 * 1. CHROMIUM_PATH when set (an Error if it is not an executable file: no silent fallback);
 * 2. a Chromium or Chrome installed on the machine;
 * 3. the Chromium shipped in the @sparticuz/chromium devDependency (Linux x64), decompressed once
 *    into the temporary directory.
 * Throws NO_CHROMIUM_MESSAGE when none of them can be had.
 */
export async function resolveChromium(options: ResolveOptions = {}): Promise<ResolvedChromium> {
  const env = options.env ?? process.env;
  const fromEnv = env.CHROMIUM_PATH;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!existsSync(fromEnv)) {
      throw new Error(`CHROMIUM_PATH is ${fromEnv}, which does not exist: point it at a Chromium or unset it`);
    }
    if (!isExecutableFile(fromEnv)) {
      throw new Error(
        `CHROMIUM_PATH is ${fromEnv}, which is not an executable file: point it at a Chromium or unset it`,
      );
    }
    return { executablePath: fromEnv, source: 'env', args: [...BASE_ARGS], env: {} };
  }

  const installed = (options.systemCandidates ?? systemChromiumCandidates(env)).find(isExecutableFile);
  if (installed) return { executablePath: installed, source: 'system', args: [...BASE_ARGS], env: {} };

  const bundled = await bundledChromium(options.bundledPackage ?? BUNDLED_CHROMIUM_PACKAGE);
  if (bundled) return bundled;
  throw new Error(NO_CHROMIUM_MESSAGE);
}

interface SparticuzChromium {
  args: string[];
  setGraphicsMode: boolean;
}

const execFileAsync = promisify(execFile);

/**
 * Run in a child node with TMPDIR pointed at a fresh directory: @sparticuz/chromium decompresses into
 * os.tmpdir(), and would otherwise reuse a half-written /tmp/chromium of a test file running in parallel.
 * AWS_EXECUTION_ENV makes it also unpack the NSS/NSPR/expat libraries it ships for Amazon Linux 2023,
 * used when the machine lacks them. Graphics mode off: --disable-gpu is kept, so no WebGL/SwiftShader flags
 * (143.0.4 still unpacks the SwiftShader libraries; they go unused).
 */
const EXTRACT_SCRIPT = `
const c = require(process.argv[1]);
c.setGraphicsMode = false;
c.executablePath().then((p) => process.stdout.write(p), (e) => { process.stderr.write(String(e && e.message)); process.exit(1); });
`;

async function bundledChromium(specifier: string): Promise<ResolvedChromium | null> {
  if (process.platform !== 'linux' || process.arch !== 'x64') return null;
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve(specifier);
  } catch {
    return null;
  }
  const pkgDir = path.resolve(path.dirname(entry), '..', '..');
  const version = (JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const dir = path.join(os.tmpdir(), `sift-chromium-${version}`);
  const executablePath = path.join(dir, 'chromium');

  if (!isExecutableFile(executablePath)) {
    // Unpack into a private directory, then move it into place in one rename, so that parallel test
    // files never see a partial binary. The loser of a race drops its copy and uses the winner's.
    const staging = await mkdtemp(path.join(os.tmpdir(), 'sift-chromium-unpack-'));
    try {
      const { stdout } = await execFileAsync(process.execPath, ['-e', EXTRACT_SCRIPT, entry], {
        env: { ...process.env, TMPDIR: staging, AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs20.x' },
        maxBuffer: 1024 * 1024,
      });
      if (stdout.trim() !== path.join(staging, 'chromium')) {
        throw new Error(`${specifier} unpacked Chromium to ${stdout.trim()}, expected ${staging}/chromium`);
      }
      await writeFile(path.join(staging, 'fonts.conf'), fontsConf(dir));
      await rename(staging, dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    if (!isExecutableFile(executablePath))
      throw new Error(`${executablePath} is missing: remove ${dir} and run the tests again`);
  }

  const mod = (await import(specifier)) as { default: SparticuzChromium };
  mod.default.setGraphicsMode = false;
  const recommended = mod.default.args.filter(
    (arg) =>
      !BASE_ARGS.includes(arg) && !DROPPED_BUNDLED_FLAGS.some((flag) => arg === flag || arg.startsWith(`${flag}=`)),
  );

  const env: Record<string, string> = { FONTCONFIG_FILE: path.join(dir, 'fonts.conf') };
  if (await missesLibraries(executablePath)) {
    const libDir = path.join(dir, 'al2023', 'lib');
    env.LD_LIBRARY_PATH = [libDir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  }
  return { executablePath, source: 'npm', args: [...BASE_ARGS, ...recommended], env };
}

/** The machine's fonts when it has a fontconfig setup, plus the Open Sans shipped with the package. */
function fontsConf(dir: string): string {
  return `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <dir>${path.join(dir, 'fonts', 'fonts')}</dir>
  <cachedir>${path.join(dir, 'fonts-cache')}</cachedir>
</fontconfig>
`;
}

/** True when the dynamic loader cannot find a library the binary needs (or ldd is unavailable). */
async function missesLibraries(executablePath: string): Promise<boolean> {
  try {
    const { stdout } = await execFileAsync('ldd', [executablePath]);
    return stdout.includes('not found');
  } catch {
    return true;
  }
}

let resolved: Promise<ResolvedChromium> | undefined;

/** resolveChromium() with the process's environment, once per process. */
export function chromiumForTests(): Promise<ResolvedChromium> {
  resolved ??= resolveChromium().catch((error: unknown) => {
    resolved = undefined;
    throw error;
  });
  return resolved;
}

/** A headless Chromium (see resolveChromium for which one) with the flags this sandboxed machine needs. */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const found = await chromiumForTests();
  return chromium.launch({
    executablePath: found.executablePath,
    headless: true,
    args: found.args,
    env: { ...process.env, ...found.env },
  });
}

export function artifactPath(name: string): string {
  return path.join(ARTIFACTS_DIR, name);
}

/**
 * Fills the sign-in form `page` shows with `credentials` and submits it, waiting for `arrived`
 * (the page the form leads to, e.g. `() => page.waitForURL(url)`).
 */
export async function submitSignInForm(
  page: Page,
  credentials: { username: string; password: string },
  arrived: () => Promise<unknown>,
): Promise<void> {
  await page.fill('input[name=username]', credentials.username);
  await page.fill('input[name=password]', credentials.password);
  await Promise.all([arrived(), page.click('button[type=submit]:has-text("Sign in")')]);
}

/** Signs in through /login?next=/settings/keys on the app at `base`, arriving on the keys page. */
export async function signInToKeysPage(
  page: Page,
  base: string,
  credentials: { username: string; password: string },
): Promise<void> {
  await page.goto(`${base}/login?next=/settings/keys`);
  await submitSignInForm(page, credentials, () => page.waitForURL(`${base}/settings/keys`));
}
