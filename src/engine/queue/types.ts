/**
 * The task queue between a tasks run's coordinator and its workers, with two implementations
 * behind this one interface: in-process (`in-process-queue.ts`, the default: workers are async
 * functions of the coordinator's process) and BullMQ on Redis (`redis-queue.ts`: workers on any
 * machine that reaches Redis, `ratchet worker --queue redis://...`).
 *
 * Life of a job: the coordinator enqueues one attempt of one task (`TaskJob`); a worker takes it
 * and runs the handler, which streams events back (`emit`) and returns a result; the coordinator
 * sees `job-start`, `job-event`s, then `job-complete` or `job-fail` (`subscribe`), and the
 * handle's `outcome`. A job whose worker dies (killed, machine lost) is started again on another
 * worker as the next *delivery* (a new `job-start`), up to a limit. A handler that throws fails
 * its job: task failures are the scheduler's to judge, not the queue's to retry.
 *
 * No duplicate effects: a job's id is its run, task and attempt, so enqueueing it again is a
 * no-op that returns the existing job; and `effect(name, fn)` records what `fn` returned under
 * the job's id, so a later delivery gets the recorded value instead of doing it again. Only the
 * job's current delivery may emit or record: a worker thought dead that wakes up is refused.
 */

/** What crosses the queue (Redis stores it as JSON). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One attempt of one task of one run. */
export interface TaskJob<P extends JsonValue = JsonValue> {
  runId: string;
  taskKey: string;
  /** The attempt of the task (a re-run after a conflicting merge is the next one), from 1. */
  attempt: number;
  /** What the worker needs (the task, the base commit, where to fetch the repository). */
  payload: P;
}

/** The job id: run, task and attempt, each URI-encoded (BullMQ refuses `:` in ids). */
export function taskJobId(job: Pick<TaskJob, 'runId' | 'taskKey' | 'attempt'>): string {
  return [job.runId, job.taskKey, String(job.attempt)].map(encodeURIComponent).join('/');
}

/**
 * What the coordinator hears about a job, in order for each job. `delivery` counts the starts of
 * the job (2 and more: its earlier worker died); `seq` numbers a delivery's events from 1.
 */
export type JobUpdate<R extends JsonValue = JsonValue> =
  | { type: 'job-start'; jobId: string; delivery: number; worker: string }
  | { type: 'job-event'; jobId: string; delivery: number; seq: number; event: JsonValue }
  | { type: 'job-complete'; jobId: string; delivery: number; result: R }
  | { type: 'job-fail'; jobId: string; delivery: number; error: string };

export type JobOutcome<R extends JsonValue = JsonValue> =
  | { status: 'completed'; result: R; deliveries: number }
  | {
      status: 'failed';
      /** The handler's error, or why the queue gave up (its workers kept dying). */
      error: string;
      deliveries: number;
    };

export interface JobHandle<R extends JsonValue = JsonValue> {
  readonly id: string;
  /** Settles when the job completes or fails; never rejects for the job's own failure. */
  readonly outcome: Promise<JobOutcome<R>>;
}

/** The coordinator's side of a queue: the jobs of one run. */
export interface TaskQueue<P extends JsonValue = JsonValue, R extends JsonValue = JsonValue> {
  /**
   * Adds the job, or, when a job with its id exists (enqueued before, by this process or by one
   * the run was resumed from), returns that job's handle: it is never added twice.
   */
  enqueue(job: TaskJob<P>): Promise<JobHandle<R>>;
  /** Calls `listener` with every update of the run's jobs from now on; returns the unsubscribe. */
  subscribe(listener: (update: JobUpdate<R>) => void): () => void;
  /** Stops listening and releases connections (running jobs go on in their workers). */
  close(): Promise<void>;
}

/** What a handler gets for one delivery of a job. */
export interface JobContext<P extends JsonValue = JsonValue> {
  readonly job: TaskJob<P>;
  readonly jobId: string;
  readonly delivery: number;
  /** The worker's id (host and pid for a Redis worker). */
  readonly worker: string;
  /** Aborted when this delivery is abandoned (its worker is stopping, or was replaced). */
  readonly signal: AbortSignal;
  /** Streams an event back to the coordinator. Rejects once this delivery was replaced. */
  emit(event: JsonValue): Promise<void>;
  /**
   * Runs `fn` once per job and `name`: a later delivery gets the value the first one recorded.
   * A worker that dies after `fn` ends and before the value is recorded leaves it unrecorded, so
   * `fn` should be safe to repeat in that window (push a branch, write a file: yes).
   */
  effect<T extends JsonValue>(name: string, fn: () => Promise<T>): Promise<T>;
}

export type JobHandler<P extends JsonValue = JsonValue, R extends JsonValue = JsonValue> = (
  context: JobContext<P>,
) => Promise<R>;

/** A worker's side: it takes jobs from the queue and runs them with its handler. */
export interface QueueWorker {
  readonly id: string;
  /** Lets the jobs it runs finish, then stops taking new ones. */
  close(): Promise<void>;
}

/** Thrown into a handler's `emit` / `effect` once its delivery was replaced by a newer one. */
export class StaleDeliveryError extends Error {
  override readonly name = 'StaleDeliveryError';
  constructor(jobId: string, delivery: number) {
    super(`Job ${jobId}: delivery ${delivery} was replaced (its worker was given up for dead)`);
  }
}
