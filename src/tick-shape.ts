import { createHook } from 'node:async_hooks';

/*
 * Keeps one of Node's process.nextTick objects alive for the life of the
 * process, so that V8 keeps the hidden classes ("maps") of those objects.
 * Imported first by server.ts, before the server allocates much: the earlier,
 * the likelier no full collection has run yet.
 *
 * Why. nextTick (node:internal/process/task_queues) builds each tick as
 * `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`.
 * V8 (11.3, Node 20) defines the two computed keys through a feedback slot
 * that stays fast only while it has seen a single map; any other map makes it
 * megamorphic for good, and from then on every nextTick (Node's streams call
 * it several times a request) defines those keys in the runtime, about 1,300
 * instructions each. The maps the object goes through are held only weakly
 * (by the transitions and the feedback) and by the tick objects, which live
 * for a moment: a full collection that runs while no tick is pending frees
 * them, the next tick builds new ones, and the slot goes megamorphic (the
 * reading the counts below support: keeping one tick object removed the
 * runtime path every time; V8's source was not read to confirm it). Whether
 * that happens depended on what the process had loaded and when its
 * collections ran: counted with bench/request-instructions.ts (instant
 * answers, 5,000 requests), METRICS_ENABLED=true took this path in 6 runs of
 * 6, about 35,000 instructions a request (138,000 runtime calls in all,
 * 11–12 % of the server's instructions); metrics off in none of 3, but a
 * preloaded @opentelemetry/api brought it with metrics off too. With a tick
 * object kept, neither did. It is not a cure: on 2026-11-30 one run of four
 * (bench/request-instructions.ts with WARM_P over every endpoint first) took
 * the runtime path with the tick object kept, 27 calls a request as before.
 *
 * The tick object is taken from an async hook's init (a TickObject's
 * resource is the tick object itself, node:async_hooks), enabled around one
 * nextTick and disabled at once: no hook stays installed.
 */

/** The tick object that the next process.nextTick builds, taken with an async hook installed for that call only. */
export function nextTickObject(): object | undefined {
  let tick: object | undefined;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'TickObject' && tick === undefined) tick = resource as object;
    },
  });
  hook.enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
  return tick;
}

const kept = nextTickObject();

/** The tick object kept (tests). */
export function keptTickObject(): object | undefined {
  return kept;
}
