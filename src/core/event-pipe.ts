import type { EventInput } from './events.js';

/**
 * Runs `task` with an `emit` callback and yields the events it emits, as they arrive, then
 * returns the task's result. This lets a workflow written as an async generator call deep
 * code (agent runtimes, verifiers) that reports through callbacks.
 */
export async function* pipeEvents<T>(
  task: (emit: (event: EventInput) => void) => Promise<T>,
): AsyncGenerator<EventInput, T> {
  const queue: EventInput[] = [];
  let wake: (() => void) | undefined;
  let settled = false;
  const emit = (event: EventInput): void => {
    queue.push(event);
    wake?.();
  };
  const done = task(emit).finally(() => {
    settled = true;
    wake?.();
  });
  // Keep an unhandled rejection from surfacing before we await `done` below.
  done.catch(() => undefined);
  while (true) {
    while (queue.length > 0) yield queue.shift() as EventInput;
    if (settled) break;
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
    wake = undefined;
  }
  return await done;
}
