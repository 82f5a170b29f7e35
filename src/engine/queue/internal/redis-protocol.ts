import { z } from 'zod';
import type { JobUpdate, JsonValue } from '../types.js';

/**
 * What the coordinator and the workers of the Redis queue agree on besides BullMQ's own keys:
 * where a job's deliveries and effects live, where a run's updates stream, and the Lua scripts
 * that make "only the current delivery may write" atomic. Everything read back from Redis is
 * validated: another process (maybe another version) wrote it.
 */

export interface RedisQueueOptions {
  /** `redis://host:port[/db]` (credentials in the URL if the server needs them). */
  url: string;
  /** The BullMQ queue the coordinator and its workers share. Default `ratchet-tasks`. */
  name?: string;
  /** Prefix of every key. Default `ratchet`. */
  prefix?: string;
  /** The server's password when the URL holds none (`REDIS_PASSWORD`: a stored URL never holds one). */
  password?: string;
}

const DEFAULT_QUEUE_NAME = 'ratchet-tasks';
const DEFAULT_PREFIX = 'ratchet';

export interface QueueKeys {
  name: string;
  prefix: string;
  /** Hash: `delivery` (the current one), `e:<name>` (recorded effects, JSON). */
  job(jobId: string): string;
  /** Stream of a run's `JobUpdate`s, field `u` (JSON). */
  updates(runId: string): string;
}

export function queueKeys(options: RedisQueueOptions): QueueKeys {
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  return {
    name,
    prefix,
    job: (jobId) => `${prefix}:${name}:ratchet-job:${jobId}`,
    updates: (runId) => `${prefix}:${name}:ratchet-updates:${encodeURIComponent(runId)}`,
  };
}

/** The connection options of `url` (and `password`); blocking connections need no per-request retry limit. */
export function connectionOptions(
  url: string,
  password?: string,
): { url: string; maxRetriesPerRequest: null; password?: string } {
  return { url, maxRetriesPerRequest: null, ...(password === undefined ? {} : { password }) };
}

/**
 * Every update is added with the stream capped near `UPDATES_MAX_LENGTH` entries and kept for
 * `UPDATES_TTL_SECONDS` after its last write: the coordinator trims what it has read once the job
 * it belongs to ended (`XTRIM MINID`), and these bound what a coordinator that never comes back
 * leaves in Redis (each entry may hold a model call's whole request and response).
 */
const UPDATES_MAX_LENGTH = 100_000;
const UPDATES_TTL_SECONDS = 7 * 24 * 3600;
const ADD_UPDATE = (update: string): string =>
  `redis.call('XADD', KEYS[2], 'MAXLEN', '~', '${UPDATES_MAX_LENGTH}', '*', 'u', ${update})
redis.call('EXPIRE', KEYS[2], ${UPDATES_TTL_SECONDS})`;

/**
 * A new delivery: bumps the job's delivery count and streams `job-start`, atomically, so the
 * coordinator never sees a start whose number another worker also got.
 * KEYS: job hash, updates stream. ARGV: job id, worker id. Returns the delivery.
 */
export const START_SCRIPT = `
local delivery = redis.call('HINCRBY', KEYS[1], 'delivery', 1)
local update = cjson.encode({type = 'job-start', jobId = ARGV[1], delivery = delivery, worker = ARGV[2]})
${ADD_UPDATE('update')}
return delivery`;

/**
 * Streams an update unless the delivery was replaced. KEYS: job hash, updates stream. ARGV:
 * delivery, update JSON. Returns 1, or 0 for a replaced delivery.
 */
export const EMIT_SCRIPT = `
if redis.call('HGET', KEYS[1], 'delivery') ~= ARGV[1] then return 0 end
${ADD_UPDATE('ARGV[2]')}
return 1`;

/**
 * Reads a recorded effect. KEYS: job hash. ARGV: delivery, field. Returns `{'stale'}`,
 * `{'none'}` or `{'value', json}`.
 */
export const EFFECT_GET_SCRIPT = `
if redis.call('HGET', KEYS[1], 'delivery') ~= ARGV[1] then return {'stale'} end
local value = redis.call('HGET', KEYS[1], ARGV[2])
if value then return {'value', value} end
return {'none'}`;

/**
 * Records an effect (the first value recorded wins). KEYS: job hash. ARGV: delivery, field, JSON.
 * Returns `{'stale'}` or `{'value', json}` (the recorded value).
 */
export const EFFECT_SET_SCRIPT = `
if redis.call('HGET', KEYS[1], 'delivery') ~= ARGV[1] then return {'stale'} end
redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3])
return {'value', redis.call('HGET', KEYS[1], ARGV[2])}`;

export const EffectReplySchema = z.union([
  z.tuple([z.literal('stale')]),
  z.tuple([z.literal('none')]),
  z.tuple([z.literal('value'), z.string()]),
]);

const JsonSchema: z.ZodType<JsonValue> = z.json();

export const TaskJobSchema = z.object({
  runId: z.string().min(1),
  taskKey: z.string().min(1),
  attempt: z.number().int().positive(),
  payload: JsonSchema,
});

export const JobUpdateSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('job-start'), jobId: z.string(), delivery: z.number(), worker: z.string() }),
  z.object({
    type: z.literal('job-event'),
    jobId: z.string(),
    delivery: z.number(),
    seq: z.number(),
    event: JsonSchema,
  }),
  z.object({ type: z.literal('job-complete'), jobId: z.string(), delivery: z.number(), result: JsonSchema }),
  z.object({ type: z.literal('job-fail'), jobId: z.string(), delivery: z.number(), error: z.string() }),
]) satisfies z.ZodType<JobUpdate>;

/** `XREAD` / `XRANGE` replies (RESP2): entries of `[id, [field, value, ...]]`. */
export const StreamEntriesSchema = z.array(z.tuple([z.string(), z.array(z.string())]));
export const XreadReplySchema = z.array(z.tuple([z.string(), StreamEntriesSchema])).nullable();

/** The stream id right after `id` (`<ms>-<seq + 1>`): `XTRIM MINID` of it removes `id` and all before. */
export function streamIdNext(id: string): string {
  const [ms = 0n, seq = 0n] = id.split('-').map((part) => BigInt(part));
  return `${ms}-${seq + 1n}`;
}

/** True when stream id `a` comes after `b` (`<ms>-<seq>`, compared as numbers). */
export function streamIdAfter(a: string, b: string): boolean {
  const [aMs = 0n, aSeq = 0n] = a.split('-').map((part) => BigInt(part));
  const [bMs = 0n, bSeq = 0n] = b.split('-').map((part) => BigInt(part));
  return aMs > bMs || (aMs === bMs && aSeq > bSeq);
}
