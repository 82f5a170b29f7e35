import type { EventInput, RatchetEvent } from '../core/events.js';
import type { Clock } from '../core/effects.js';

/** Wraps workflow events in the common envelope (id, runId, timestamp). */
export function createEnveloper(runId: string, clock: Clock, firstSeq = 0): (event: EventInput) => RatchetEvent {
  let seq = firstSeq;
  return (event) => ({ ...event, id: `${runId}:${++seq}`, runId, timestamp: clock.now().toISOString() });
}
