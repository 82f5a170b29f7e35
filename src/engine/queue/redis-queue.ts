import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import {
  connectionOptions,
  JobUpdateSchema,
  queueKeys,
  StreamEntriesSchema,
  streamIdAfter,
  streamIdNext,
  XreadReplySchema,
  type QueueKeys,
  type RedisQueueOptions,
} from './internal/redis-protocol.js';
import {
  taskJobId,
  type JobHandle,
  type JobOutcome,
  type JobUpdate,
  type JsonValue,
  type TaskJob,
  type TaskQueue,
} from './types.js';

/**
 * The coordinator's side of the Redis queue (`ratchet tasks run --queue redis://...`). Jobs go
 * through BullMQ; what workers stream (`job-start`, `job-event`) comes from the run's stream of
 * updates; how a job ended comes from BullMQ itself (its `completed` / `failed` events, or the
 * job's state when it had ended before this coordinator looked), so a worker that dies between
 * finishing and reporting cannot leave a job that never ends. Before a job's end is reported,
 * the stream is read up to now: a job's events always come before its end.
 */

export interface RedisCoordinatorOptions extends RedisQueueOptions {
  /** The run whose jobs this coordinator enqueues and hears about. */
  runId: string;
  /** Connection problems (the clients retry on their own); the engine never prints, the CLI may. */
  onError?: (error: Error) => void;
}

/** How long one blocking read of the update stream waits (ms): the longest `close` waits for it. */
const BLOCK_MS = 1000;

const ReturnValueSchema: z.ZodType<JsonValue> = z.json();

interface Pending<R extends JsonValue> {
  handle: JobHandle<R>;
  settle: (outcome: JobOutcome<R>) => void;
  settled: boolean;
  /** Its updates were deleted from the stream (after its end): later ones are not kept track of. */
  trimmed: boolean;
}

class RedisTaskQueue<P extends JsonValue, R extends JsonValue> implements TaskQueue<P, R> {
  readonly #listeners = new Set<(update: JobUpdate<R>) => void>();
  readonly #pending = new Map<string, Pending<R>>();
  #lastId = '0';
  /** The updates read of each job not yet ended (stream ids, oldest first): deleted when it ends. */
  readonly #read = new Map<string, string[]>();
  #reading = false;
  #closed = false;

  constructor(
    private readonly runId: string,
    private readonly keys: QueueKeys,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly reader: Redis,
    private readonly client: Redis,
    private readonly onError: (error: Error) => void,
  ) {
    events.on('completed', ({ jobId, returnvalue }) => {
      const parsed = ReturnValueSchema.safeParse(returnvalue);
      void this.#end(
        jobId,
        parsed.success
          ? { status: 'completed', result: parsed.data as R }
          : { status: 'failed', error: `The job's result is not JSON: ${parsed.error.message}` },
      );
    });
    events.on('failed', ({ jobId, failedReason }) => {
      void this.#end(jobId, { status: 'failed', error: failedReason });
    });
  }

  async enqueue(job: TaskJob<P>): Promise<JobHandle<R>> {
    const id = taskJobId(job);
    const known = this.#pending.get(id);
    if (known !== undefined) return known.handle;
    let settle: (outcome: JobOutcome<R>) => void = () => undefined;
    const outcome = new Promise<JobOutcome<R>>((resolve) => {
      settle = resolve;
    });
    const pending: Pending<R> = { handle: { id, outcome }, settle, settled: false, trimmed: false };
    this.#pending.set(id, pending);
    // BullMQ adds nothing when a job with this id exists (finished jobs are kept for this).
    await this.queue.add('task', job, { jobId: id, attempts: 1 });
    // It may have ended before we listened (a resumed coordinator): its state says so.
    const stored = await this.queue.getJob(id);
    const state = stored === undefined ? 'unknown' : await stored.getState();
    if (stored !== undefined && state === 'completed') {
      const parsed = ReturnValueSchema.safeParse(stored.returnvalue);
      await this.#end(
        id,
        parsed.success
          ? { status: 'completed', result: parsed.data as R }
          : { status: 'failed', error: 'The job result is not JSON' },
      );
    } else if (stored !== undefined && state === 'failed') {
      await this.#end(id, { status: 'failed', error: stored.failedReason });
    }
    return pending.handle;
  }

  /** Listens from the first update of the run's stream: a resumed coordinator hears what it missed. */
  subscribe(listener: (update: JobUpdate<R>) => void): () => void {
    this.#listeners.add(listener);
    if (!this.#reading) {
      this.#reading = true;
      void this.#readLoop();
    }
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    this.reader.disconnect();
    await Promise.allSettled([this.events.close(), this.queue.close()]);
    this.client.disconnect();
  }

  #publish(update: JobUpdate<R>): void {
    for (const listener of this.#listeners) listener(update);
  }

  /** Delivers stream entries newer than the last one delivered (the loop and `#drain` both read). */
  #deliver(entries: z.infer<typeof StreamEntriesSchema>): void {
    for (const [id, fields] of entries) {
      if (!streamIdAfter(id, this.#lastId)) continue;
      this.#lastId = id;
      const text = fields[fields.indexOf('u') + 1];
      const parsed = text === undefined ? undefined : JobUpdateSchema.safeParse(JSON.parse(text));
      if (parsed?.success === true) {
        const { jobId } = parsed.data;
        if (this.#pending.get(jobId)?.trimmed === false) this.#read.set(jobId, [...(this.#read.get(jobId) ?? []), id]);
        this.#publish(parsed.data as JobUpdate<R>);
      } else
        this.onError(new Error(`An update of run ${this.runId} in Redis is not one Ratchet writes: ${text ?? ''}`));
    }
  }

  async #readLoop(): Promise<void> {
    const key = this.keys.updates(this.runId);
    while (!this.#closed) {
      try {
        const reply = XreadReplySchema.parse(
          await this.reader.call('XREAD', 'BLOCK', String(BLOCK_MS), 'STREAMS', key, this.#lastId),
        );
        for (const [, entries] of reply ?? []) this.#deliver(entries);
      } catch (error) {
        if (this.#closed) return;
        this.onError(error instanceof Error ? error : new Error(String(error)));
        await new Promise((resolve) => setTimeout(resolve, BLOCK_MS));
      }
    }
  }

  async #drain(): Promise<void> {
    const start = this.#lastId === '0' ? '-' : `(${this.#lastId}`;
    this.#deliver(
      StreamEntriesSchema.parse(await this.client.call('XRANGE', this.keys.updates(this.runId), start, '+')),
    );
  }

  async #end(
    jobId: string,
    end: { status: 'completed'; result: R } | { status: 'failed'; error: string },
  ): Promise<void> {
    const pending = this.#pending.get(jobId);
    if (pending === undefined || pending.settled) return;
    pending.settled = true;
    try {
      await this.#drain();
    } catch (error) {
      this.onError(error instanceof Error ? error : new Error(String(error)));
    }
    const deliveries = Number((await this.client.hget(this.keys.job(jobId), 'delivery')) ?? 0);
    this.#publish(
      end.status === 'completed'
        ? { type: 'job-complete', jobId, delivery: deliveries, result: end.result }
        : { type: 'job-fail', jobId, delivery: deliveries, error: end.error },
    );
    pending.settle({ ...end, deliveries });
    await this.#trim(jobId);
  }

  /**
   * Drops from the run's stream what it no longer needs once `jobId` ended: that job's updates,
   * and whatever is older than the oldest update of a job still running here (jobs of earlier
   * attempts: a resumed run starts its unfinished tasks as new attempts, new jobs). A stream never
   * trimmed would keep every model call of the run in Redis.
   */
  async #trim(jobId: string): Promise<void> {
    const pending = this.#pending.get(jobId);
    if (pending !== undefined) pending.trimmed = true;
    const ids = this.#read.get(jobId) ?? [];
    this.#read.delete(jobId);
    const oldest = [...this.#read.values()]
      .flatMap((read) => read.slice(0, 1))
      .reduce((min, id) => (streamIdAfter(min, id) ? id : min), streamIdNext(this.#lastId));
    const key = this.keys.updates(this.runId);
    try {
      if (ids.length > 0) await this.client.call('XDEL', key, ...ids);
      if (this.#lastId !== '0') await this.client.call('XTRIM', key, 'MINID', oldest);
    } catch (error) {
      this.onError(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/** Opens the coordinator's side of the Redis queue for one run; resolves once connected. */
export async function openRedisQueue<P extends JsonValue, R extends JsonValue>(
  options: RedisCoordinatorOptions,
): Promise<TaskQueue<P, R>> {
  const keys = queueKeys(options);
  const onError = options.onError ?? ((): void => undefined);
  const connection = connectionOptions(options.url, options.password);
  const queue = new Queue(keys.name, { connection, prefix: keys.prefix });
  const events = new QueueEvents(keys.name, { connection, prefix: keys.prefix });
  const clientOptions = { maxRetriesPerRequest: null, ...(options.password ? { password: options.password } : {}) };
  const reader = new Redis(options.url, clientOptions);
  const client = new Redis(options.url, clientOptions);
  queue.on('error', onError);
  events.on('error', onError);
  reader.on('error', onError);
  client.on('error', onError);
  try {
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), client.ping()]);
  } catch (error) {
    reader.disconnect();
    client.disconnect();
    await Promise.allSettled([events.close(), queue.close()]);
    throw error;
  }
  return new RedisTaskQueue<P, R>(options.runId, keys, queue, events, reader, client, onError);
}
