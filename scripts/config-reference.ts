/*
 * `npm run config-reference`: writes docs/configuration.md, the configuration
 * reference, from the two places that define the configuration:
 *
 * - src/config/schema.ts (`envSchema`): the variables and their defaults;
 * - .env.example: the sections (`# --- Title ---`) and each variable's
 *   description (the comment lines right above its `NAME=default` line).
 *
 *   npm run config-reference               # (re)write docs/configuration.md
 *   npm run config-reference -- --check    # exit 1 when anything disagrees (CI)
 *
 * `--check` writes nothing; it fails when a variable is in the schema but not
 * in .env.example or the other way round, when a default in .env.example is
 * not the schema's (a variable without a schema default must be empty there),
 * when a variable has no description, or when docs/configuration.md is not
 * what this script generates. `--env-example <file>` and `--out <file>` read
 * and write other files (the tests use them on doctored copies).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { parseConfig } from '../src/config/index.js';
import { envSchema } from '../src/config/schema.js';
import { PROVIDERS } from '../src/providers/registry.js';
import type { ProviderDescriptor } from '../src/providers/types.js';

export interface ExampleVariable {
  name: string;
  /** The value after `=` in .env.example (empty = unset). */
  value: string;
  description: string;
  /** 1-based line of `NAME=` in .env.example. */
  line: number;
}

export interface ExampleSection {
  title: string;
  variables: ExampleVariable[];
}

export interface EnvExample {
  /** Comment lines before the first section, without their `# `. */
  preamble: string[];
  sections: ExampleSection[];
}

const SECTION = /^#\s*---\s*(.+?)\s*---\s*$/;
const VARIABLE = /^([A-Z][A-Z0-9_]*)=(.*)$/;

/** The sections and variables of an .env.example text. */
export function parseEnvExample(text: string): EnvExample {
  const preamble: string[] = [];
  const sections: ExampleSection[] = [];
  let comments: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    const section = SECTION.exec(line);
    if (section) {
      sections.push({ title: section[1]!, variables: [] });
      comments = [];
      return;
    }
    if (line.startsWith('#')) {
      const comment = line.replace(/^#\s?/, '');
      if (sections.length === 0) preamble.push(comment);
      else comments.push(comment);
      return;
    }
    const variable = VARIABLE.exec(line);
    if (variable) {
      if (sections.length === 0) sections.push({ title: 'Settings', variables: [] });
      sections.at(-1)!.variables.push({
        name: variable[1]!,
        value: variable[2]!.trim(),
        description: comments.join(' ').trim(),
        line: i + 1,
      });
    }
    comments = [];
  });
  return { preamble, sections };
}

type AnyDef = {
  type: string;
  in?: z.ZodType;
  out?: z.ZodType;
  innerType?: z.ZodType;
  defaultValue?: unknown;
};

/** The default a variable's schema applies when it is unset (as the string .env.example would hold), or undefined. */
export function schemaDefault(schema: z.ZodType): string | undefined {
  const def = (schema as unknown as { _zod: { def: AnyDef } })._zod.def;
  switch (def.type) {
    case 'default':
    case 'prefault':
      return String(typeof def.defaultValue === 'function' ? def.defaultValue() : def.defaultValue);
    case 'pipe':
      return schemaDefault(def.in!) ?? schemaDefault(def.out!);
    case 'optional':
    case 'nullable':
    case 'readonly':
    case 'catch':
      return schemaDefault(def.innerType!);
    default:
      return undefined;
  }
}

/** Every variable of the schema with its default (undefined = none: unset). */
export function schemaDefaults(shape: Record<string, z.ZodType> = envSchema.shape): Map<string, string | undefined> {
  return new Map(Object.entries(shape).map(([name, schema]) => [name, schemaDefault(schema)]));
}

/** A table cell: `|` escaped; outside code spans, `<` and `>` too (or `<provider>` would read as an HTML tag). */
const cell = (text: string) =>
  text
    .split('`')
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[<>]/g, (c) => `\\${c}`)))
    .join('`')
    .replace(/\|/g, '\\|');
const code = (text: string) => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);

/** `Title (a note)` → heading `Title` and the note as a sentence. */
function splitTitle(title: string): { heading: string; note: string } {
  const match = /^(.*?)\s+\((.+)\)$/.exec(title);
  if (!match) return { heading: title, note: '' };
  const note = match[2]!;
  return { heading: match[1]!, note: `${note[0]!.toUpperCase()}${note.slice(1)}${/[.!?]$/.test(note) ? '' : '.'}` };
}

/** The text of docs/configuration.md. */
export function renderReference(example: EnvExample, defaults: Map<string, string | undefined>): string {
  const out: string[] = [
    '# Configuration reference',
    '',
    '<!-- Generated by `npm run config-reference` from src/config/schema.ts and .env.example: edit those, then rerun it. -->',
    '',
    'Every variable Sift reads, by section, with its default and what it does. Generated from the',
    'configuration schema (`src/config/schema.ts`: names and defaults) and [`.env.example`](../.env.example)',
    '(sections and descriptions); `npm run config-reference -- --check` (run by CI) fails when the three disagree.',
    '',
  ];
  if (example.preamble.length) out.push(...example.preamble.map((l) => `> ${l}`), '');
  for (const section of example.sections) {
    const { heading, note } = splitTitle(section.title);
    out.push(`## ${heading}`, '');
    if (note) out.push(note, '');
    out.push('| Variable | Default | Description |', '|---|---|---|');
    for (const v of section.variables) {
      const fallback = defaults.get(v.name);
      const shown = fallback === undefined || fallback === '' ? 'unset' : code(fallback);
      out.push(`| \`${v.name}\` | ${cell(shown)} | ${cell(v.description)} |`);
    }
    out.push('');
  }
  out.push(...upstreamTerms());
  return out.join('\n');
}

const count = new Intl.NumberFormat('en-US');
const per = (r: { limit: number; windowSeconds: number }) =>
  `${count.format(r.limit)} a ${r.windowSeconds === 1 ? 'second' : r.windowSeconds === 60 ? 'minute' : `${r.windowSeconds} s`}`;

/** What each upstream's terms are and what Sift keeps to by default, from the providers' descriptors. */
export function upstreamTerms(): string[] {
  const out = [
    '## Upstream terms',
    '',
    "What Sift keeps to for each provider by default: the upstream's published terms, enforced across",
    "every worker and instance on the database, and only while the base URL is the upstream's own host",
    '(a self-hosted server, a proxy or a fake is bound by `PROVIDER_LIMITS` alone). Providers that',
    'report their limits on their answers are paced by what they report. `PROVIDER_LIMITS` overrides any',
    'of it per provider (`off` lifts a default); a provider without a slot in time sits a search out,',
    'listed in `unresponsive` as `rate_limited` (or `budget_exhausted`), never recorded as down. A',
    'budget is visible in `/api/v1/status/`, on `/status` and in `/metrics`, and alerts at 80 % and 100 %.',
    "One user's searches may spend `user_share` of a budget (default 10 %, at least one call): a user past",
    'it sees the provider as `budget_exhausted` while others still spend; `/status` and the alert name',
    'the user who spent the most (never a key). A configured rate holds in every sliding window: slots',
    'are spaced a little wider than the rate (150 ms shared by the calls of one window).',
    '',
    '| Provider | Default on its own host | Reported by the upstream | Source |',
    '|---|---|---|---|',
  ];
  const sample = parseConfig({});
  const keyed = parseConfig({ STACKEXCHANGE_API_KEY: 'k' });
  for (const p of PROVIDERS as readonly ProviderDescriptor[]) {
    const terms = p.terms;
    const report = p.limitsReport;
    if (!terms && !report) continue;
    const parts: string[] = [];
    if (terms?.rate) parts.push(`at most ${per(terms.rate)}`);
    if (terms?.concurrency) parts.push(`${terms.concurrency} at once`);
    const budget = terms?.budget?.(sample);
    const keyedBudget = terms?.budget?.(keyed);
    if (budget) {
      const withKey =
        keyedBudget && keyedBudget.calls !== budget.calls ? ` (${count.format(keyedBudget.calls)} with a key)` : '';
      parts.push(`${count.format(budget.calls)} calls a ${budget.period}${withKey}`);
    }
    if (report?.untilReported) parts.push(`${per(report.untilReported)} until its first answer reports its plan`);
    const hosts = terms ? ` (${terms.hosts.map((h) => `\`${h}\``).join(', ')})` : '';
    const source = [...new Set([terms?.source, report?.source].filter(Boolean))].map((s) => `<${s}>`).join(', ');
    out.push(
      `| \`${p.slug}\` ${p.name} | ${parts.length ? parts.join('; ') + hosts : 'none'} | ${report ? 'X-RateLimit-* on each answer: paced by them' : '—'} | ${source} |`,
    );
  }
  out.push(
    '',
    'Other providers publish no hard terms Sift could keep to; set a budget for any of them, for example',
    '`PROVIDER_LIMITS="provider_02 month=5000; provider_07 day=50"`.',
    '',
  );
  return out;
}

/** Every way the schema, .env.example and the committed reference disagree (empty = in step). */
export function problems(
  example: EnvExample,
  defaults: Map<string, string | undefined>,
  committed: string | null,
  names: { envExample: string; reference: string } = { envExample: '.env.example', reference: 'docs/configuration.md' },
): string[] {
  const found: string[] = [];
  const listed = new Map<string, ExampleVariable>();
  for (const v of example.sections.flatMap((s) => s.variables)) {
    if (listed.has(v.name))
      found.push(`${v.name} is listed twice in ${names.envExample} (lines ${listed.get(v.name)!.line} and ${v.line})`);
    else listed.set(v.name, v);
  }
  for (const name of defaults.keys()) {
    if (!listed.has(name))
      found.push(`${name} is in the config schema (src/config/schema.ts) but not in ${names.envExample}`);
  }
  for (const [name, v] of listed) {
    if (!defaults.has(name)) {
      found.push(
        `${name} is in ${names.envExample} (line ${v.line}) but not in the config schema (src/config/schema.ts)`,
      );
      continue;
    }
    const fallback = defaults.get(name) ?? '';
    if (v.value !== fallback) {
      found.push(
        `${name}: ${names.envExample} (line ${v.line}) says ${JSON.stringify(v.value)}, the schema's default is ${fallback === '' ? 'unset (leave it empty)' : JSON.stringify(fallback)}`,
      );
    }
    if (!v.description) found.push(`${name} has no description (a comment line above it) in ${names.envExample}`);
  }
  const generated = renderReference(example, defaults);
  if (committed === null) {
    found.push(`${names.reference} is missing: run npm run config-reference`);
  } else if (committed !== generated) {
    const a = committed.split('\n');
    const b = generated.split('\n');
    let i = 0;
    while (i < Math.max(a.length, b.length) && a[i] === b[i]) i++;
    found.push(
      `${names.reference} is out of date (first difference at line ${i + 1}: has ${JSON.stringify(a[i] ?? '<end of file>')}, ` +
        `expected ${JSON.stringify(b[i] ?? '<end of file>')}): run npm run config-reference`,
    );
  }
  return found;
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function main(): number {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const { values } = parseArgs({
    options: {
      check: { type: 'boolean', default: false },
      'env-example': { type: 'string', default: path.join(root, '.env.example') },
      out: { type: 'string', default: path.join(root, 'docs', 'configuration.md') },
    },
  });
  const envFile = values['env-example'];
  const outFile = values.out;
  const names = { envExample: path.relative(process.cwd(), envFile), reference: path.relative(process.cwd(), outFile) };
  const example = parseEnvExample(readFileSync(envFile, 'utf8'));
  const defaults = schemaDefaults();
  if (values.check) {
    const found = problems(example, defaults, readOrNull(outFile), names);
    if (found.length) {
      process.stderr.write(
        `config-reference: the config schema, ${names.envExample} and ${names.reference} disagree:\n${found.map((p) => `  - ${p}`).join('\n')}\n`,
      );
      return 1;
    }
    process.stdout.write(
      `config-reference: ${defaults.size} variables; schema, ${names.envExample} and ${names.reference} agree\n`,
    );
    return 0;
  }
  // Writing still refuses a schema and .env.example out of step: the reference would be wrong.
  const found = problems(example, defaults, renderReference(example, defaults), names);
  if (found.length) {
    process.stderr.write(`config-reference: fix these first:\n${found.map((p) => `  - ${p}`).join('\n')}\n`);
    return 1;
  }
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, renderReference(example, defaults));
  process.stdout.write(`config-reference: wrote ${names.reference} (${defaults.size} variables)\n`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  process.exitCode = main();
}
