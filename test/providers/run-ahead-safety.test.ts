import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAhead } from '../../src/limits/api-limits.js';
import type { Refusal } from '../../src/limits/api-limits.js';

/*
 * The search-route helper starts a request's upstream work while its rate-limit
 * decision is pending (runAhead). Work that rejects during that wait must never
 * be an unhandled rejection: close-with-grace treats one as fatal.
 */

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

function requestWith(admission: Promise<Refusal | null>) {
  const warnings: unknown[] = [];
  const request = { admission, log: { warn: (o: unknown) => warnings.push(o) } } as unknown as FastifyRequest;
  const sent: { status?: number; body?: unknown } = {};
  const reply = {
    code(s: number) {
      sent.status = s;
      return this;
    },
    header() {
      return this;
    },
    send(b: unknown) {
      sent.body = b;
      return this;
    },
  } as unknown as FastifyReply;
  return { request, reply, sent, warnings };
}

const later = <T>(value: T, ms = 50) => new Promise<T>((r) => setTimeout(() => r(value), ms));
const tick = () => new Promise((r) => setTimeout(r, 20));

beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('runAhead', () => {
  it('holds a rejection of work that fails while admission is pending, then throws it to the handler', async () => {
    const { request, reply } = requestWith(later(null));
    const failure = new Error('upstream exploded');
    const outcome = runAhead(request, reply, () => Promise.reject(failure));
    await expect(outcome).rejects.toBe(failure);
    await tick();
    expect(unhandled).toEqual([]);
  });

  it('sends the refusal and logs (never throws) the failure of work whose request was refused', async () => {
    const refusal: Refusal = { status: 429, retryAfter: '3', detail: 'Request was throttled. Expected available in 3 seconds.' };
    const { request, reply, sent, warnings } = requestWith(later(refusal));
    const outcome = await runAhead(request, reply, () => Promise.reject(new Error('late failure')));
    expect(outcome).toBeNull();
    expect(sent).toEqual({ status: 429, body: { detail: refusal.detail } });
    await tick();
    expect(unhandled).toEqual([]);
    expect(warnings).toHaveLength(1);
  });

  it('hands back the value of work that succeeds once the request is admitted', async () => {
    const { request, reply } = requestWith(later(null));
    expect(await runAhead(request, reply, async () => 42)).toEqual({ value: 42 });
  });
});
