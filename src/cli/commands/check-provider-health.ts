import { HealthRecorder } from '../../providers/health-recorder.js';
import { createHttpClient } from '../../providers/http.js';
import { configSecrets } from '../../providers/plugin.js';
import { runProbes } from '../../providers/probes.js';
import { createProviderDirectory } from '../../providers/registry.js';
import { createRunner } from '../../providers/runner.js';
import type { Command } from '../command.js';

/** `sift check-provider-health`: probes the probe-monitored providers once and records the outcomes. */
export const checkProviderHealthCommand: Command = {
  name: 'check-provider-health',
  summary: 'Probe the actively checked providers once and record their health',
  usage: '',
  async run(ctx) {
    const { config } = ctx;
    const providers = createProviderDirectory(config);
    const pool = await ctx.db();
    const secrets = configSecrets(config);
    const http = createHttpClient({ userAgent: config.SIFT_USER_AGENT, secrets });
    // Every outcome is written: the throttle is for the request path, not a one-off run.
    const recorder = new HealthRecorder(pool, { throttleMs: 0, historyFlushMs: 0 });
    try {
      const results = await runProbes(config, providers, createRunner({ http, recorder, providers, secrets }));
      await recorder.close();
      if (results.length === 0) {
        ctx.out('No providers to probe (none configured).');
        return;
      }
      for (const r of results) ctx.out(`${r.slug}: ${r.ok ? 'up' : 'down'}`);
    } finally {
      await http.close();
    }
  },
};
