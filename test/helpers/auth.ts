import type pg from 'pg';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { type ApiKeyAuthenticator, createApiKeyAuthenticator, presentedKey } from '../../src/auth/api-key-auth.js';
import type { ApiPrincipal } from '../../src/auth/types.js';
import { createUser } from '../../src/auth/users.js';
import { decideAdmissions } from '../../src/limits/admission.js';

const UNLIMITED = { limit: 1_000_000, windowSeconds: 60, text: '1000000/min' };

/**
 * What the API gate makes of a key, as it does it: the cache first, then (on a miss) the
 * admission statement's lookup, not rate-limited. For tests of who may use the API.
 */
export async function authenticate(
  pool: pg.Pool,
  key: string,
  cache: ApiKeyAuthenticator = createApiKeyAuthenticator(),
): Promise<{ kind: 'ok'; principal: ApiPrincipal } | { kind: 'invalid' | 'disabled' | 'not-provided' }> {
  const identity = cache.identify(presentedKey({ authorization: `Api-Key ${key}` }));
  if (identity.kind !== 'unknown') return identity;
  const [decided] = await decideAdmissions(
    pool,
    { limits: { burst: UNLIMITED, sustained: UNLIMITED }, monthlyQuota: 0 },
    [{ key: { prefix: identity.prefix, secretHash: identity.secretHash }, limited: false, metered: false, units: 0 }],
  );
  cache.remember(identity, decided!.row ?? null);
  const verdict = decided!.admission.verdict;
  if (verdict === 'invalid-key') return { kind: 'invalid' };
  if (verdict === 'disabled-user') return { kind: 'disabled' };
  const again = cache.identify(presentedKey({ authorization: `Api-Key ${key}` }));
  if (again.kind === 'ok') return again;
  // Looked up before a change was heard: the statement's own answer.
  const row = decided!.row!;
  return {
    kind: 'ok',
    principal: { keyId: row.keyId, prefix: row.prefix, userId: row.userId, username: row.username },
  };
}

/** A new user `username` holding one API key: the caller of a test file's API requests. */
export async function createUserWithKey(pool: pg.Pool, username: string): Promise<{ userId: number; apiKey: string }> {
  const user = await createUser(pool, { username });
  return { userId: user.id, apiKey: (await issueApiKey(pool, user.id)).key };
}
