import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../src/providers/types.js';
import { unlessSuspended } from '../../../src/upstream/stages/not-suspended.js';
import { ProviderSuspensions } from '../../../src/upstream/suspension.js';

/* Stage 3, not suspended (src/upstream/stages/not-suspended.ts), on an injected clock. */

describe('the not-suspended stage', () => {
  it('fails at once without calling a suspended provider, and calls it again once the suspension ends', async () => {
    let now = 0;
    const suspensions = new ProviderSuspensions(
      { afterFailures: 2, firstMs: 30_000, maxMs: 60_000 },
      undefined,
      () => now,
    );
    const stage = unlessSuspended(suspensions);
    let calls = 0;
    const call = async () => ++calls;
    expect(await stage('provider_06', call)).toBe(1);
    for (let i = 0; i < 2; i++) suspensions.failed(new UpstreamError('provider_06', 'http_status', 'HTTP 500', 500));
    await expect(stage('provider_06', call)).rejects.toMatchObject({ kind: 'suspended' });
    expect(await stage('provider_12', call)).toBe(2);
    now += 30_001;
    expect(await stage('provider_06', call)).toBe(3);
  });
});
