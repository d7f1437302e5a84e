import type { ApiKeyRecord } from './api-keys.js';

/** The base body of `GET /api/v1/key/`; the limits module adds `usage` and `limits`. */
export interface KeyInfo {
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked: boolean;
}

export function describeApiKey(record: ApiKeyRecord): KeyInfo {
  return {
    name: record.name,
    prefix: record.displayPrefix,
    created_at: record.createdAt.toISOString(),
    last_used_at: record.lastUsedAt ? record.lastUsedAt.toISOString() : null,
    revoked: record.revokedAt !== null,
  };
}
