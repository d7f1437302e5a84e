import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';

export const ARTIFACTS_DIR = path.resolve('test-artifacts');

/** Debian's Chromium, headless, with the flags this sandboxed machine needs. */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export function artifactPath(name: string): string {
  return path.join(ARTIFACTS_DIR, name);
}
