import type { FastifyInstance } from 'fastify';
import { healthOf } from '../upstream/health-store.js';
import { createAlertSender } from './sender.js';
import { queueBudgetNotice, targetOf } from './transitions.js';

/*
 * Provider state-change webhooks (ALERT_WEBHOOK_URLS; registered only when
 * set). The changes are queued by the health recorder's status writes
 * (transitions.ts, wired in upstream/services.ts); this instance sends what
 * is due (sender.ts): soon after it queued a change itself, and on a slow
 * poll for the others'. Each URL gets the message in its format (formats.ts).
 */
export async function alertsPlugin(app: FastifyInstance): Promise<void> {
  const config = app.config;
  const sender = createAlertSender({
    pool: app.pool,
    urls: config.ALERT_WEBHOOK_URLS,
    windowMs: config.ALERT_DIGEST_WINDOW_MS,
    userAgent: config.SIFT_USER_AGENT,
    log: app.log,
    describe: (slug) => {
      const d = app.providers.configured().find((p) => p.slug === slug) ?? app.providers.get(slug);
      return { name: d?.name ?? slug, group: d?.group ?? '' };
    },
    downNow: async () => {
      const configured = app.providers.configured();
      const health = healthOf(configured, await app.health.reader.rows());
      return configured.filter((_, i) => health[i]!.state === 'down').map((p) => p.name);
    },
  });
  app.health.recorder.onStatusWritten((written) => {
    if (written.transitions.length > 0) sender.wake();
  });
  // The one process whose call took a budget to 80 % or 100 % queues the notice for every webhook.
  const targets = config.ALERT_WEBHOOK_URLS.map(targetOf);
  app.health.onBudgetCrossed((crossing) => {
    queueBudgetNotice(app.pool, targets, crossing).then(
      () => sender.wake(),
      (err: unknown) => app.log.warn({ err, provider: crossing.provider }, 'alerts: budget notice not queued'),
    );
  });
  app.addHook('onReady', async () => sender.start());
  app.addHook('onClose', async () => sender.stop());
}
