import type { Command } from '../command.js';
import { migrateCommand } from './migrate.js';

/** Every CLI command, in the order `--help` lists them. */
export const commands: Command[] = [migrateCommand];
