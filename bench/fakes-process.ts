/*
 * Process 1 of the benchmark: the four fake web engines (test/fakes) with a
 * configurable latency, plus a small control endpoint to switch fault modes.
 * Prints one JSON line {env, control} on stdout when ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWebFakes } from '../test/fakes/index.js';

const latencyMs = Number(process.argv[2] ?? 50);
const fakes = await startWebFakes({ latencyMs });
const engines = { brave: fakes.brave, mojeek: fakes.mojeek, marginalia: fakes.marginalia, staan: fakes.staan };

// POST /mode?engine=staan&kind=hang  |  kind=normal
const control = createServer((req, res) => {
  const u = new URL(req.url ?? '/', 'http://control');
  const engine = engines[u.searchParams.get('engine') as keyof typeof engines];
  const kind = u.searchParams.get('kind');
  if (!engine || (kind !== 'hang' && kind !== 'normal')) {
    res.writeHead(400).end('bad request');
    return;
  }
  engine.setMode({ kind });
  res.writeHead(204).end();
});
await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()));

process.stdout.write(
  `${JSON.stringify({ env: fakes.env, control: `http://127.0.0.1:${(control.address() as AddressInfo).port}` })}\n`,
);
process.on('SIGTERM', async () => {
  control.close();
  await fakes.close();
  process.exit(0);
});
