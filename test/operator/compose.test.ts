import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DCLinter } from 'dclint';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENV_VARIABLES, parseConfig } from '../../src/config/index.js';

/*
 * docker-compose.yml and deploy/Caddyfile, read as data (CI also runs
 * `docker compose config`, and starts the stack, where Docker is there):
 * PostgreSQL, two Sift replicas on one DATABASE_URL (its password beside it),
 * Caddy in front on the one published port, every health check on /up.
 */

interface Service {
  build?: unknown;
  image?: string;
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
  ports?: string[];
  volumes?: string[];
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const caddyfile = readFileSync('deploy/Caddyfile', 'utf8');
const services = compose.services;
const replicas = ['sift-1', 'sift-2'];

/** dclint's rules of taste (key order, quoting, binding the published port to one address) are left out. */
const linter = new DCLinter({
  rules: {
    'service-keys-order': 0,
    'services-alphabetical-order': 0,
    'top-level-properties-order': 0,
    'require-quotes-in-ports': 0,
    'no-unbound-port-interfaces': 0,
  },
  quiet: false,
  debug: false,
  exclude: [],
});

function lint(text: string): { rule: string; message: string }[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'sift-compose-'));
  try {
    const file = path.join(dir, 'docker-compose.yml');
    writeFileSync(file, text);
    // Typed here: dclint's declarations import their own modules without extensions, which Node's resolution does not find.
    const results: { messages: { rule: string; message: string }[] }[] = linter.lintFiles([file], false);
    return results.flatMap((r) => r.messages.map((m) => ({ rule: m.rule, message: m.message })));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('docker-compose.yml', () => {
  // Where no compose plugin is installed (CI's `docker compose config` is skipped there), the
  // Compose specification's schema as dclint checks it.
  it('is valid for the Compose specification and dclint', () => {
    const text = readFileSync('docker-compose.yml', 'utf8');
    expect(lint(text)).toEqual([]);
    // The same checks refuse a condition Compose does not know, and the obsolete version field.
    const unknownCondition = lint(text.replace('condition: service_started', 'condition: service_up'));
    expect(unknownCondition.map((m) => m.rule)).toEqual(['invalid-schema']);
    expect(lint(`version: "3.9"\n${text}`).map((m) => m.rule)).toEqual(['no-version-field']);
  });

  it('has PostgreSQL, two Sift replicas built from this repository, and Caddy', () => {
    expect(Object.keys(services).sort()).toEqual(['caddy', 'postgres', 'sift-1', 'sift-2']);
    for (const name of replicas) {
      expect(services[name]!.build, name).toBe('.');
      expect(services[name]!.image, name).toBe('sift:local');
    }
    expect(services.postgres!.image).toMatch(/^postgres:\d+/);
    expect(services.caddy!.image).toMatch(/^caddy:2/);
  });

  it('points both replicas at the compose PostgreSQL with one DATABASE_URL, the password beside it', () => {
    const urls = replicas.map((name) => services[name]!.environment!.DATABASE_URL);
    expect(new Set(urls).size).toBe(1);
    const pg = services.postgres!.environment!;
    const url = new URL(urls[0]!);
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe('postgres');
    expect(url.port).toBe('5432');
    expect(url.username).toBe(pg.POSTGRES_USER);
    expect(url.pathname).toBe(`/${pg.POSTGRES_DB}`);
    // No password in the URL: the same expression as PostgreSQL's, as DATABASE_PASSWORD.
    expect(url.password).toBe('');
    for (const name of replicas) expect(services[name]!.environment!.DATABASE_PASSWORD).toBe(pg.POSTGRES_PASSWORD);
    // Nothing but Sift's own variables, each valid as set.
    for (const name of replicas) {
      for (const variable of Object.keys(services[name]!.environment!)) {
        expect(ENV_VARIABLES, `${name} sets ${variable}`).toContain(variable);
      }
      expect(services[name]!.environment!.TRUST_PROXY).toBe('1');
    }
  });

  it('reaches PostgreSQL with a password of any characters, as Compose would pass it', () => {
    const password = 'p@ss:w/rd%41 #?&=';
    const interpolate = (v: string) => v.replace(`\${POSTGRES_PASSWORD:-sift}`, password);
    const env = Object.fromEntries(
      Object.entries(services['sift-1']!.environment!).map(([k, v]) => [k, interpolate(String(v))]),
    );
    const url = new URL(parseConfig(env).DATABASE_URL);
    expect(decodeURIComponent(url.username)).toBe(services.postgres!.environment!.POSTGRES_USER);
    // pg reads a URL's password percent-decoded.
    expect(decodeURIComponent(url.password)).toBe(password);
    expect([url.hostname, url.port, url.pathname]).toEqual(['postgres', '5432', '/sift']);
  });

  it('checks health on /up: replicas, load balancer and its upstreams; PostgreSQL with pg_isready', () => {
    for (const name of replicas) {
      const test = services[name]!.healthcheck!.test.join(' ');
      expect(test, name).toContain(`127.0.0.1:${services[name]!.environment!.PORT}/up`);
    }
    expect(services.caddy!.healthcheck!.test.join(' ')).toMatch(/\/up\b/);
    expect(services.postgres!.healthcheck!.test).toContain('pg_isready');
    expect(caddyfile).toMatch(/^\s*health_uri \/up$/m);
    const upstreams = /reverse_proxy ([^{]+)\{/.exec(caddyfile)![1]!.trim().split(/\s+/);
    expect(upstreams).toEqual(replicas.map((name) => `${name}:${services[name]!.environment!.PORT}`));
  });

  it('starts the replicas together once PostgreSQL is healthy, and the load balancer with them', () => {
    for (const name of replicas) {
      expect(Object.keys(services[name]!.depends_on!), name).toEqual(['postgres']);
      expect(services[name]!.depends_on!.postgres!.condition).toBe('service_healthy');
    }
    // Not service_healthy on each replica (that waits for all of them): Caddy checks them itself.
    for (const name of replicas) expect(services.caddy!.depends_on![name]!.condition).toBe('service_started');
    expect(caddyfile).toMatch(/^\s*health_uri \/up$/m);
    for (const name of [...replicas, 'caddy', 'postgres']) expect(services[name]!.restart, name).toBe('unless-stopped');
  });

  it('states the Compose version its optional env_file needs', () => {
    expect(readFileSync('docker-compose.yml', 'utf8')).toMatch(/Needs Docker Compose 2\.24 or later/);
    expect(readFileSync('README.md', 'utf8')).toMatch(/Docker Compose 2\.24 or\s+later/);
  });

  it('publishes one port, the load balancer', () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => [name, p]));
    expect(published).toEqual([['caddy', `\${SIFT_PORT:-8000}:80`]]);
    expect(caddyfile).toMatch(/^:80 \{$/m);
  });

  it('keeps data in named volumes', () => {
    expect(services.postgres!.volumes).toEqual(['postgres-data:/var/lib/postgresql']);
    for (const name of replicas) expect(services[name]!.volumes).toEqual(['sift-data:/data']);
    expect(Object.keys(compose.volumes).sort()).toEqual(['caddy-data', 'postgres-data', 'sift-data']);
  });
});
