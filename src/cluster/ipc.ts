import type { Worker } from 'node:cluster';
import type pino from 'pino';

/* The primary and its workers talk by typed messages over node:cluster's IPC channel. */

export const isMessage = <T extends { type: string }>(msg: unknown, type: T['type']): msg is T =>
  typeof msg === 'object' && msg !== null && (msg as { type?: unknown }).type === type;

/**
 * In the primary: sends to a worker whose channel is open. A write can still fail when the worker
 * exits meanwhile (EPIPE): Node then emits 'error' on the worker unless the send has a callback,
 * and an 'error' with no listener would end the primary (as an uncaught exception, exit 1) in the
 * middle of a shutdown, while the workers exit and one of them still has a note to pass on. The
 * worker's exit is handled where it exits (supervisor.ts).
 */
export function sendToWorker(worker: Worker, message: object, log: pino.Logger): void {
  if (!worker.isConnected()) return;
  worker.send(message, undefined, undefined, (err: Error | null) => {
    if (err) log.debug({ err }, 'a message to a worker was not delivered');
  });
}
