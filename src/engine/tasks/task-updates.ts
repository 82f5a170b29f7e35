import { RatchetError } from '../../core/errors.js';
import type { EventInput } from '../../core/events.js';
import type { RemoteTaskRequest, TaskAttemptOutcome } from '../../workflows/definition.js';
import { taskJobId, type JobUpdate, type JsonValue, type TaskJob, type TaskQueue } from '../queue/types.js';
import { TaskJobResultSchema } from './task-job.js';

/**
 * How the coordinator follows one job of a queue, whichever workers run it (a Redis queue's on
 * other machines, or the run's local worker processes): the job's updates waited on one at a
 * time, and what each says to the scheduler.
 */

/** What one update of a job says to the scheduler: events to record, then (at its end) the outcome. */
export function* interpretUpdate(
  update: JobUpdate,
  request: Pick<RemoteTaskRequest, 'task' | 'attempt'>,
  branch: string,
  /** The event a worker streamed, as recorded here (`remoteEvent` for a queue's workers). */
  eventOf: (value: JsonValue, task: string) => { ok: true; event: EventInput } | { ok: false; why: string },
): Generator<EventInput, TaskAttemptOutcome | undefined> {
  const task = request.task.key;
  switch (update.type) {
    case 'job-start':
      if (update.delivery > 1)
        yield {
          type: 'warning',
          message: `${task}: re-delivered to ${update.worker} (delivery ${update.delivery}): the worker before stopped answering; its commits are never merged`,
          task,
        };
      yield {
        type: 'task-update',
        task,
        status: 'running',
        attempt: request.attempt,
        branch,
        worker: update.worker,
        delivery: update.delivery,
      };
      return undefined;
    case 'job-event': {
      const event = eventOf(update.event, task);
      if (event.ok) yield event.event;
      else yield { type: 'warning', message: `${task}: an event from its worker was refused (${event.why})`, task };
      return undefined;
    }
    case 'job-complete': {
      const result = TaskJobResultSchema.safeParse(update.result);
      if (!result.success)
        return { status: 'failed', reason: 'its worker returned a result Ratchet does not write', code: 'internal' };
      return result.data;
    }
    case 'job-fail':
      return { status: 'failed', reason: `its worker failed: ${update.error}`, code: 'internal' };
  }
}

/** A job's updates, waited on one at a time (no polling); the run's interruption stops the wait. */
function createUpdateInbox(): { push(update: JobUpdate): void; next(signal?: AbortSignal): Promise<JobUpdate> } {
  const queued: JobUpdate[] = [];
  let waiting: ((update: JobUpdate) => void) | undefined;
  return {
    push(update) {
      if (waiting) {
        const wake = waiting;
        waiting = undefined;
        wake(update);
      } else queued.push(update);
    },
    next(signal) {
      const update = queued.shift();
      if (update !== undefined) return Promise.resolve(update);
      if (signal?.aborted) return Promise.reject(new RatchetError('interrupted', 'Interrupted'));
      return new Promise((resolve, reject) => {
        const onAbort = (): void => {
          waiting = undefined;
          reject(new RatchetError('interrupted', 'Interrupted'));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting = (value) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value);
        };
      });
    },
  };
}

/** Where a queue's updates go: to the listener of their job, set while the job is followed. */
export type JobListeners = Map<string, (update: JobUpdate) => void>;

/**
 * Enqueues one attempt of a task and follows its job to the end: yields the events its workers
 * stream (and its starts), returns its outcome. `stopped` rejects when the workers can no longer
 * run it (the local pool's processes do not start); the run's `signal` interrupts the wait.
 */
export async function* followJob(
  queue: Pick<TaskQueue, 'enqueue'>,
  listeners: JobListeners,
  job: TaskJob,
  follow: {
    request: Pick<RemoteTaskRequest, 'task' | 'attempt'>;
    branch: string;
    eventOf: Parameters<typeof interpretUpdate>[3];
    signal?: AbortSignal | undefined;
    stopped?: Promise<never>;
  },
): AsyncGenerator<EventInput, TaskAttemptOutcome> {
  const updates = createUpdateInbox();
  const id = taskJobId(job);
  listeners.set(id, (update) => updates.push(update));
  try {
    await queue.enqueue(job);
    for (;;) {
      const next = updates.next(follow.signal);
      const update = await (follow.stopped === undefined ? next : Promise.race([next, follow.stopped]));
      const step = yield* interpretUpdate(update, follow.request, follow.branch, follow.eventOf);
      if (step !== undefined) return step;
    }
  } finally {
    listeners.delete(id);
  }
}
