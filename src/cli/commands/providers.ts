import { providerConfiguration } from '../../providers/configuration.js';
import type { Command } from '../command.js';

/** `sift providers [--json]`: every provider, whether this instance has it configured, and why not. */
export const providersCommand: Command = {
  name: 'providers',
  summary: 'List the providers: configured, or why not (no key, disabled), and their base URL host',
  usage: '[--json]',
  options: { json: { type: 'boolean' } },
  async run(ctx, args) {
    const rows = providerConfiguration(ctx.config);
    if (args.values.json) {
      ctx.out(JSON.stringify(rows, null, 2));
      return;
    }
    const table = [
      ['SLUG', 'NAME', 'GROUP', 'CONFIGURED', 'BASE URL HOST'],
      ...rows.map((r) => [r.slug, r.name, r.group, r.configured ? 'yes' : r.reason, r.base_url_host]),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    for (const row of table)
      ctx.out(
        row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      );
  },
};
