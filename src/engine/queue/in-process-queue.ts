import {
  StaleDeliveryError,
  taskJobId,
  type JobContext,
  type JobHandle,
  type JobHandler,
  type JobOutcome,
  type JobUpdate,
  type JsonValue,
  type QueueWorker,
  type TaskJob,
  type TaskQueue,
} from './types.js';

/**
 * The default queue: coordinator and workers share one process, and a "worker" is a slot that
 * runs handlers concurrently with the others. Model calls and test runs are the slow part and are
 * asynchronous, so the slots overlap them without threads (see `bench/workers.ts`). It keeps the
 * Redis queue's semantics (idempotent enqueue, deliveries, recorded effects, stale deliveries
 * refused), so the scheduler and its tests see one behaviour whichever queue runs the jobs.
 */

export interface InProcessQueueOptions {
  /** Starts of a job allowed before the queue gives up on it (its workers keep dying). Default 3. */
  maxDeliveries?: number;
}

export interface InProcessWorkerOptions {
  /** Default `local-<n>`. */
  id?: string;
  /** Jobs it runs at once. Default 1. */
  concurrency?: number;
}

/** A local worker; `kill` is what a dying worker process does to its jobs. */
export interface InProcessWorker extends QueueWorker {
  /**
   * Stops at once, abandoning its jobs: each is started again on another worker as its next
   * delivery (or fails once it has had `maxDeliveries`); their handlers' signals are aborted and
   * anything they emit or record from then on is refused.
   */
  kill(): void;
}

interface JobState<P extends JsonValue, R extends JsonValue> {
  job: TaskJob<P>;
  id: string;
  delivery: number;
  status: 'waiting' | 'active' | 'completed' | 'failed';
  effects: Map<string, JsonValue>;
  abort: AbortController | null;
  worker: WorkerState<P, R> | null;
  outcome: Promise<JobOutcome<R>>;
  settle: (outcome: JobOutcome<R>) => void;
}

interface WorkerState<P extends JsonValue, R extends JsonValue> {
  id: string;
  handler: JobHandler<P, R>;
  concurrency: number;
  active: Set<JobState<P, R>>;
  accepting: boolean;
  idle: (() => void)[];
}

const DEFAULT_MAX_DELIVERIES = 3;

export class InProcessQueue<P extends JsonValue = JsonValue, R extends JsonValue = JsonValue> implements TaskQueue<
  P,
  R
> {
  readonly #maxDeliveries: number;
  readonly #jobs = new Map<string, JobState<P, R>>();
  readonly #waiting: JobState<P, R>[] = [];
  readonly #workers: WorkerState<P, R>[] = [];
  readonly #listeners = new Set<(update: JobUpdate<R>) => void>();

  constructor(options: InProcessQueueOptions = {}) {
    this.#maxDeliveries = options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
  }

  enqueue(job: TaskJob<P>): Promise<JobHandle<R>> {
    const id = taskJobId(job);
    let state = this.#jobs.get(id);
    if (state === undefined) {
      let settle: (outcome: JobOutcome<R>) => void = () => undefined;
      const outcome = new Promise<JobOutcome<R>>((resolve) => {
        settle = resolve;
      });
      state = {
        job,
        id,
        delivery: 0,
        status: 'waiting',
        effects: new Map(),
        abort: null,
        worker: null,
        outcome,
        settle,
      };
      this.#jobs.set(id, state);
      this.#waiting.push(state);
      this.#dispatch();
    }
    return Promise.resolve({ id, outcome: state.outcome });
  }

  subscribe(listener: (update: JobUpdate<R>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): Promise<void> {
    this.#listeners.clear();
    return Promise.resolve();
  }

  /** Starts a worker that takes jobs from this queue with `handler`. */
  startWorker(handler: JobHandler<P, R>, options: InProcessWorkerOptions = {}): InProcessWorker {
    const worker: WorkerState<P, R> = {
      id: options.id ?? `local-${this.#workers.length + 1}`,
      handler,
      concurrency: Math.max(1, options.concurrency ?? 1),
      active: new Set(),
      accepting: true,
      idle: [],
    };
    this.#workers.push(worker);
    this.#dispatch();
    return {
      id: worker.id,
      close: () => {
        worker.accepting = false;
        if (worker.active.size === 0) return Promise.resolve();
        return new Promise<void>((resolve) => worker.idle.push(resolve));
      },
      kill: () => {
        worker.accepting = false;
        for (const state of [...worker.active]) this.#abandon(state);
        this.#dispatch();
      },
    };
  }

  #publish(update: JobUpdate<R>): void {
    for (const listener of this.#listeners) listener(update);
  }

  #dispatch(): void {
    for (const worker of this.#workers) {
      while (worker.accepting && worker.active.size < worker.concurrency) {
        const state = this.#waiting.shift();
        if (state === undefined) return;
        this.#start(state, worker);
      }
    }
  }

  #start(state: JobState<P, R>, worker: WorkerState<P, R>): void {
    state.delivery += 1;
    state.status = 'active';
    state.worker = worker;
    state.abort = new AbortController();
    worker.active.add(state);
    const delivery = state.delivery;
    this.#publish({ type: 'job-start', jobId: state.id, delivery, worker: worker.id });
    const current = (): boolean => state.delivery === delivery && state.status === 'active';
    let seq = 0;
    const context: JobContext<P> = {
      job: state.job,
      jobId: state.id,
      delivery,
      worker: worker.id,
      signal: state.abort.signal,
      emit: (event) => {
        if (!current()) return Promise.reject(new StaleDeliveryError(state.id, delivery));
        seq += 1;
        this.#publish({ type: 'job-event', jobId: state.id, delivery, seq, event });
        return Promise.resolve();
      },
      effect: async <T extends JsonValue>(name: string, fn: () => Promise<T>): Promise<T> => {
        if (!current()) throw new StaleDeliveryError(state.id, delivery);
        if (state.effects.has(name)) return state.effects.get(name) as T;
        const value = await fn();
        if (!current()) throw new StaleDeliveryError(state.id, delivery);
        state.effects.set(name, value);
        return value;
      },
    };
    // Settles on a later turn, so a handler that returns at once still reports after `job-start`.
    void Promise.resolve()
      .then(() => worker.handler(context))
      .then(
        (result) => this.#finish(state, worker, delivery, { status: 'completed', result, deliveries: delivery }),
        (error: unknown) =>
          this.#finish(state, worker, delivery, {
            status: 'failed',
            error: error instanceof Error ? error.message : String(error),
            deliveries: delivery,
          }),
      );
  }

  #finish(state: JobState<P, R>, worker: WorkerState<P, R>, delivery: number, outcome: JobOutcome<R>): void {
    if (state.delivery !== delivery || state.status !== 'active') return; // an abandoned delivery
    this.#release(state, worker);
    state.status = outcome.status;
    this.#publish(
      outcome.status === 'completed'
        ? { type: 'job-complete', jobId: state.id, delivery, result: outcome.result }
        : { type: 'job-fail', jobId: state.id, delivery, error: outcome.error },
    );
    state.settle(outcome);
    this.#dispatch();
  }

  #abandon(state: JobState<P, R>): void {
    const { worker, abort } = state;
    if (worker !== null) this.#release(state, worker);
    abort?.abort(new StaleDeliveryError(state.id, state.delivery));
    if (state.delivery < this.#maxDeliveries) {
      state.status = 'waiting';
      this.#waiting.unshift(state);
      return;
    }
    state.status = 'failed';
    const error = `Job ${state.id} was given up after ${state.delivery} deliveries: its workers kept dying`;
    this.#publish({ type: 'job-fail', jobId: state.id, delivery: state.delivery, error });
    state.settle({ status: 'failed', error, deliveries: state.delivery });
  }

  #release(state: JobState<P, R>, worker: WorkerState<P, R>): void {
    worker.active.delete(state);
    state.worker = null;
    state.abort = null;
    if (worker.active.size === 0) for (const resolve of worker.idle.splice(0)) resolve();
  }
}
