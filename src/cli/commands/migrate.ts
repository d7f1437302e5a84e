import { migrate } from '../../db/migrate.js';
import type { Command } from '../command.js';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Apply pending database migrations',
  usage: '',
  noAutoMigrate: true,
  async run(ctx) {
    const pool = await ctx.db();
    const { applied } = await migrate(pool);
    if (applied.length === 0) ctx.out('No migrations to apply; the schema is up to date.');
    for (const name of applied) ctx.out(`Applied ${name}`);
  },
};
