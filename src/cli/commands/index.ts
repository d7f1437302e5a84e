import type { Command } from '../command.js';
import { createApiKeyCommand, listApiKeysCommand, revokeApiKeyCommand } from './api-keys.js';
import {
  createUserCommand,
  disableUserCommand,
  enableUserCommand,
  listUsersCommand,
  setPasswordCommand,
} from './users.js';
import { checkProviderHealthCommand } from './check-provider-health.js';
import { migrateCommand } from './migrate.js';
import { providersCommand } from './providers.js';

/** Every CLI command, in the order `--help` lists them. */
export const commands: Command[] = [
  migrateCommand,
  checkProviderHealthCommand,
  providersCommand,
  createUserCommand,
  setPasswordCommand,
  disableUserCommand,
  enableUserCommand,
  listUsersCommand,
  createApiKeyCommand,
  listApiKeysCommand,
  revokeApiKeyCommand,
];
