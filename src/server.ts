import closeWithGrace from 'close-with-grace';
import pino from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/index.js';
import { openDatabase } from './db/index.js';
import { migrate } from './db/migrate.js';
import { createLifecycle } from './lifecycle.js';
import { loggerOptions } from './logging.js';
import { shutdown } from './shutdown.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const line of err.problems) process.stderr.write(`${line}\n`);
      process.exit(1);
    }
    throw err;
  }

  const log = pino(loggerOptions(config) as pino.LoggerOptions);
  const started = Date.now();
  const lifecycle = createLifecycle();
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;

  // Registered first, so a signal during start-up still stops the embedded server.
  closeWithGrace({ delay: config.SHUTDOWN_TIMEOUT_MS + 5000, logger: log }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'fatal error, shutting down');
    else log.info({ signal }, 'shutting down');
    await shutdown({
      app,
      lifecycle,
      closeDatabase: () => db?.close() ?? Promise.resolve(),
      drainTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      log,
    });
    log.info('stopped');
  });

  try {
    db = await openDatabase(config, {
      info: (m) => log.info(m),
      warn: (m) => log.warn(m),
      error: (o, m) => log.error(o, m),
    });
    const { applied } = await migrate(db.pool);
    if (applied.length) log.info({ applied }, 'migrations applied');
    app = await buildApp(config, { pool: db.pool, lifecycle, logger: log });
    await app.listen({ port: config.PORT, host: config.HOST });
    log.info({ ms: Date.now() - started }, 'ready');
  } catch (err) {
    log.error(err instanceof Error ? err.message : err);
    await db?.close().catch(() => {});
    process.exit(1);
  }
}

await main();
