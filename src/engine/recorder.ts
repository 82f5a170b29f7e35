import type { Clock } from '../core/effects.js';
import type { EventInput, RatchetEvent } from '../core/events.js';
import type { Ledger } from '../ledger/types.js';
import { createEnveloper } from './event-stream.js';
import { createTaskRecords } from './task-records.js';

/**
 * The one seam every event of a run passes through: wrapped in the run's envelope (id, run id,
 * timestamp), recorded in the ledger, then handed back for the caller to yield. Progress-only
 * `model-delta` events are not recorded (the `model-call` that ends them is).
 */
export type Recorder = (event: EventInput) => Promise<RatchetEvent>;

/** A recorder for a run whose ledger holds `lastEvent` events already (0 for a new run). */
export function createRecorder(runId: string, ledger: Ledger, clock: Clock, lastEvent = 0): Recorder {
  const envelope = createEnveloper(runId, clock, lastEvent);
  const taskRecords = createTaskRecords(ledger);
  return async (event) => {
    const wrapped = envelope(event);
    if (wrapped.type !== 'model-delta') {
      await ledger.record(wrapped);
      await taskRecords(wrapped);
    }
    return wrapped;
  };
}
