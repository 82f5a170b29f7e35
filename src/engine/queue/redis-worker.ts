import { hostname } from 'node:os';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import {
  connectionOptions,
  EFFECT_GET_SCRIPT,
  EFFECT_SET_SCRIPT,
  EffectReplySchema,
  EMIT_SCRIPT,
  queueKeys,
  START_SCRIPT,
  TaskJobSchema,
  type QueueKeys,
  type RedisQueueOptions,
} from './internal/redis-protocol.js';
import {
  StaleDeliveryError,
  taskJobId,
  type JobContext,
  type JobHandler,
  type JobUpdate,
  type JsonValue,
  type QueueWorker,
  type TaskJob,
} from './types.js';

/**
 * A worker of the Redis queue (`ratchet worker --queue redis://...`): a BullMQ worker whose
 * processor wraps our handler with deliveries, the update stream and recorded effects.
 *
 * A dead worker is noticed by BullMQ's lock: the worker renews its job's lock every half
 * `lockDurationMs`; once a lock has lapsed, the next stalled-job check of any live worker
 * (every `stalledIntervalMs`) puts the job back in the queue, and a worker starts it as its next
 * delivery. After `maxDeliveries` starts BullMQ fails it instead.
 */

export interface RedisWorkerOptions extends RedisQueueOptions {
  /** Default `<hostname>:<pid>`. */
  id?: string;
  /** Jobs it runs at once. Default 1. */
  concurrency?: number;
  /** How long a job's lock lasts unrenewed: a worker silent this long is taken for dead. Default 30000. */
  lockDurationMs?: number;
  /** How often it looks for jobs whose worker died. Default 30000. */
  stalledIntervalMs?: number;
  /** Starts of a job allowed before it fails (its workers keep dying). Default 3. */
  maxDeliveries?: number;
  /** Connection problems (Redis retries on its own); the engine never prints, the CLI may. */
  onError?: (error: Error) => void;
}

const DEFAULT_MAX_DELIVERIES = 3;

/** Parses a value we wrote as JSON (`effect` values), typed as the caller's effect type. */
function parseRecorded<T extends JsonValue>(text: string): T {
  return JSON.parse(text) as T;
}

class DeliveryContext<P extends JsonValue> implements JobContext<P> {
  readonly jobId: string;
  #seq = 0;

  constructor(
    readonly job: TaskJob<P>,
    readonly delivery: number,
    readonly worker: string,
    readonly signal: AbortSignal,
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
  ) {
    this.jobId = taskJobId(job);
  }

  async emit(event: JsonValue): Promise<void> {
    this.#seq += 1;
    const update: JobUpdate = { type: 'job-event', jobId: this.jobId, delivery: this.delivery, seq: this.#seq, event };
    const written = await this.redis.eval(
      EMIT_SCRIPT,
      2,
      this.keys.job(this.jobId),
      this.keys.updates(this.job.runId),
      String(this.delivery),
      JSON.stringify(update),
    );
    if (written !== 1) throw new StaleDeliveryError(this.jobId, this.delivery);
  }

  async effect<T extends JsonValue>(name: string, fn: () => Promise<T>): Promise<T> {
    const field = `e:${name}`;
    const key = this.keys.job(this.jobId);
    const recorded = EffectReplySchema.parse(
      await this.redis.eval(EFFECT_GET_SCRIPT, 1, key, String(this.delivery), field),
    );
    if (recorded[0] === 'stale') throw new StaleDeliveryError(this.jobId, this.delivery);
    if (recorded[0] === 'value') return parseRecorded<T>(recorded[1]);
    const value = await fn();
    const stored = EffectReplySchema.parse(
      await this.redis.eval(EFFECT_SET_SCRIPT, 1, key, String(this.delivery), field, JSON.stringify(value)),
    );
    if (stored[0] !== 'value') throw new StaleDeliveryError(this.jobId, this.delivery);
    return parseRecorded<T>(stored[1]);
  }
}

/**
 * Starts a worker that takes jobs from the Redis queue and runs them with `handler`; resolves
 * once it is connected. `close()` lets its running jobs finish first.
 */
export async function startRedisWorker<P extends JsonValue, R extends JsonValue>(
  handler: JobHandler<P, R>,
  options: RedisWorkerOptions,
): Promise<QueueWorker> {
  const keys = queueKeys(options);
  const id = options.id ?? `${hostname()}:${process.pid}`;
  const onError = options.onError ?? ((): void => undefined);
  const redis = new Redis(options.url, {
    maxRetriesPerRequest: null,
    ...(options.password ? { password: options.password } : {}),
  });
  redis.on('error', onError);
  const process_ = async (job: Job, _token?: string, signal?: AbortSignal): Promise<R> => {
    const data = TaskJobSchema.parse(job.data) as TaskJob<P>;
    const jobId = taskJobId(data);
    const delivery = Number(await redis.eval(START_SCRIPT, 2, keys.job(jobId), keys.updates(data.runId), jobId, id));
    const context = new DeliveryContext<P>(data, delivery, id, signal ?? new AbortController().signal, redis, keys);
    return handler(context);
  };
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker = new Worker<JsonValue, R>(keys.name, process_, {
    connection: connectionOptions(options.url, options.password),
    prefix: keys.prefix,
    name: id,
    concurrency: Math.max(1, options.concurrency ?? 1),
    lockDuration,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    maxStalledCount: Math.max(0, (options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES) - 1),
  });
  worker.on('error', onError);
  try {
    await worker.waitUntilReady();
  } catch (error) {
    await worker.close(true);
    redis.disconnect();
    throw error;
  }
  return {
    id,
    close: async () => {
      await worker.close();
      redis.disconnect();
    },
  };
}
