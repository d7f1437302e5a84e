import { alertTransitions } from '../../alerts/transitions.js';
import { runProbes } from '../../upstream/probes.js';
import { createProviderServices } from '../../upstream/services.js';
import type { Command } from '../command.js';

/** `sift check-provider-health`: probes the probe-monitored providers once and records the outcomes. */
export const checkProviderHealthCommand: Command = {
  name: 'check-provider-health',
  summary: 'Probe the actively checked providers once and record their health',
  usage: '',
  async run(ctx) {
    const { config } = ctx;
    const pool = await ctx.db();
    // Every outcome is written when the services close (no periodic history batches in a one-off run).
    const services = createProviderServices(config, pool, {
      recorder: { historyFlushMs: 0, onTransitions: alertTransitions(config) },
    });
    let results: Awaited<ReturnType<typeof runProbes>>;
    try {
      results = await runProbes(config, services.providers, services.runner);
    } finally {
      await services.close();
    }
    if (results.length === 0) {
      ctx.out('No providers to probe (none configured).');
      return;
    }
    for (const r of results) ctx.out(`${r.slug}: ${r.ok ? 'up' : 'down'}`);
  },
};
