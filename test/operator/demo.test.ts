import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../src/providers/registry.js';
import { WebClient } from '../auth/web-client.js';

/*
 * `npm run demo` end to end: the script as a child process (its own embedded
 * database in a temporary directory, an ephemeral port), every curl it prints
 * run with fetch, then Ctrl-C.
 */

const READY = 'Ctrl-C stops the demo.';

let child: ChildProcess;
let dataDir: string;
let stdout = '';
let stderr = '';
let exited: Promise<number | null>;

function field(label: string): string {
  const match = new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm').exec(stdout);
  if (!match) throw new Error(`no "${label}" line in the demo's output:\n${stdout}`);
  return match[1]!;
}

interface Curl {
  line: string;
  url: string;
  init: RequestInit;
}

/** The printed curl commands, as fetch calls: -H headers, --data-urlencode form fields (a POST), the quoted URL. */
function printedCurls(): Curl[] {
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('curl '))
    .map((line) => {
      const tokens = [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
      const headers: Record<string, string> = {};
      const form = new URLSearchParams();
      let url = '';
      for (let i = 1; i < tokens.length; i++) {
        const token = tokens[i]!;
        if (token === '-H') {
          const header = tokens[++i]!;
          const colon = header.indexOf(':');
          headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
        } else if (token === '--data-urlencode') {
          const pair = tokens[++i]!;
          const eq = pair.indexOf('=');
          form.append(pair.slice(0, eq), pair.slice(eq + 1));
        } else if (token.startsWith('-')) {
          throw new Error(`unexpected curl option ${token} in: ${line}`);
        } else {
          url = token;
        }
      }
      return { line, url, init: form.size > 0 ? { method: 'POST', headers, body: form } : { headers } };
    });
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'sift-demo-'));
  child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo not ready in 80 s:\n${stdout}\n${stderr}`)), 80_000);
    const check = () => {
      if (stdout.includes(READY)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`demo exited with ${code} before it was ready:\n${stdout}\n${stderr}`));
    });
  });
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

describe('npm run demo', () => {
  it('prints the key, the sign-in and a curl for every endpoint, each answering 200', async () => {
    const base = field('Base URL');
    const key = field('API key');
    expect(key).toMatch(/^svc_sk_[0-9a-f]{8}\./);
    const curls = printedCurls();
    expect(curls.length).toBeGreaterThanOrEqual(20);
    for (const curl of curls) {
      expect(curl.url.startsWith(`${base}/`), curl.line).toBe(true);
      const res = await fetch(curl.url, curl.init);
      expect(res.status, `${curl.line}\n${await res.clone().text()}`).toBe(200);
      await res.arrayBuffer();
    }

    // Every endpoint of the API index has a curl, and so do the monitor endpoints.
    const index = (await (await fetch(`${base}/api/v1/`, { headers: { 'X-Api-Key': key } })).json()) as Record<
      string,
      string
    >;
    const urls = curls.map((c) => c.url.split('?')[0]!);
    for (const endpoint of Object.values(index)) expect(urls, endpoint).toContain(endpoint);
    for (const p of ['/up', '/status/health', '/status/health/provider_01']) expect(urls).toContain(base + p);
  });

  it('configures every provider against a fake, labelled as demo data', async () => {
    const key = field('API key');
    const base = field('Base URL');
    const status = (await (
      await fetch(`${base}/api/v1/status/`, { headers: { Authorization: `Api-Key ${key}` } })
    ).json()) as {
      providers: { slug: string; name: string }[];
    };
    expect(status.providers).toHaveLength(PROVIDERS.length);
    for (const p of status.providers) expect(p.name, p.slug).toMatch(/ \(demo\)$/);

    const web = (await (await fetch(`${base}/api/v1/web/?q=demo`, { headers: { 'X-Api-Key': key } })).json()) as {
      engine: string[];
      results: unknown[];
      unresponsive: unknown[];
    };
    expect(web.engine).toEqual(['provider_01', 'provider_02', 'provider_03', 'provider_04']);
    expect(web.results.length).toBeGreaterThan(0);
    expect(web.unresponsive).toEqual([]);
  });

  it('signs the demo user in to /status, under a demo banner', async () => {
    const base = field('Base URL');
    const signIn = /Sign in\s+\S+ as (\S+) \/ (\S+)/.exec(stdout);
    expect(signIn).not.toBeNull();
    const client = new WebClient(base);
    const login = await client.get('/login');
    expect(login.text).toContain('class="demo-banner"');
    const res = await client.signIn(signIn![1]!, signIn![2]!);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).not.toContain('/login');
    const page = await client.get('/status');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Demo data');
    expect(page.text).toContain('Brave Search (demo)');
  });

  it('stops on Ctrl-C, embedded database included', async () => {
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 30_000);
});
