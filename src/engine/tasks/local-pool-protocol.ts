import { z } from 'zod';
import type { ResolvedConfig } from '../../config/resolved.js';
import type { RunInfo } from '../../workflows/definition.js';
import { TaskSpecSchema } from '../../workflows/tasks/tasks-file.js';
import { FRAMEWORKS } from '../../verify/detect.js';
import { TaskJobResultSchema, TestRunSchema } from './task-job.js';

/**
 * What crosses the IPC channel between a tasks run's coordinator and its local worker processes
 * (`local-pool.ts`, `local-worker.ts`). Both ends are this version of Ratchet, started by the
 * same user, and nothing else can write to the channel; each side still parses what it reads.
 * The coordinator's resolved configuration and the run are passed through as they are (they
 * were validated where they were made).
 */

/** The shared things a worker waits its turn for: the repository's commits and worktrees, and the cores. */
const POOL_LOCKS = ['commits', 'worktrees', 'commands'] as const;
export type PoolLock = (typeof POOL_LOCKS)[number];

const Sha = z.string().regex(/^[0-9a-f]{40,64}$/);

/** One attempt of one task, as a local worker runs it (the repository is the run's own). */
export const LocalJobPayloadSchema = z.object({
  task: TaskSpecSchema,
  dependencies: z.array(TaskSpecSchema),
  /** The run's other tasks: the files they own, which PLAN may not name. */
  others: z.array(TaskSpecSchema),
  startPoint: Sha,
  settings: z.object({
    testCommand: z.string().min(1),
    framework: z.enum(FRAMEWORKS),
    refactor: z.enum(['always', 'when-needed', 'never']),
  }),
  /** The coordinator's passing run of the full suite at `startPoint`, PLAN's baseline (none: PLAN runs it). */
  baseline: z.object({ result: TestRunSchema, outputFile: z.string().nullable() }).optional(),
});
export type LocalJobPayload = z.infer<typeof LocalJobPayloadSchema>;

export const LocalJobResultSchema = z.object({
  branch: z.string().regex(/^ratchet\/[A-Za-z0-9._-]+$/),
  outcome: TaskJobResultSchema,
});
export type LocalJobResult = z.infer<typeof LocalJobResultSchema>;

/** A test review of the run (`RecordedReview`): what a worker's circuit breaker counts. */
export const RecordedReviewSchema = z.object({
  outcome: z.enum(['accepted', 'rejected', 'error', 'skipped']),
  reason: z.string().optional(),
});

/** Coordinator to worker. */
export const ToWorkerSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('init'),
    run: z.custom<RunInfo>((value) => typeof value === 'object' && value !== null && 'worktree' in value),
    config: z.custom<ResolvedConfig>((value) => typeof value === 'object' && value !== null && 'provider' in value),
    runDir: z.string(),
    /** The run's test reviews so far (`RecordedReview`): the worker's circuit breaker starts from them. */
    reviews: z.array(RecordedReviewSchema),
  }),
  z.object({
    type: z.literal('job'),
    jobId: z.string(),
    delivery: z.number().int().positive(),
    attempt: z.number().int().positive(),
    payload: z.unknown(),
  }),
  /** The delivery was abandoned (the run is stopping): its pipeline is interrupted. */
  z.object({ type: z.literal('abort'), jobId: z.string() }),
  /** The worker's turn for a lock it asked for. */
  z.object({ type: z.literal('granted'), request: z.number().int() }),
  /** A test review another worker did: every worker's circuit breaker counts the run's reviews. */
  z.object({
    type: z.literal('review'),
    ...RecordedReviewSchema.shape,
  }),
  /** The run is over: finish (interrupting what still runs) and exit. */
  z.object({ type: z.literal('stop') }),
]);
export type ToWorker = z.infer<typeof ToWorkerSchema>;

/** Worker to coordinator. */
export const FromWorkerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({
    type: z.literal('event'),
    jobId: z.string(),
    delivery: z.number().int(),
    event: z.looseObject({ type: z.string() }),
  }),
  z.object({ type: z.literal('result'), jobId: z.string(), delivery: z.number().int(), result: z.unknown() }),
  z.object({
    type: z.literal('error'),
    jobId: z.string(),
    delivery: z.number().int(),
    message: z.string(),
    code: z.string(),
  }),
  z.object({ type: z.literal('acquire'), request: z.number().int(), lock: z.enum(POOL_LOCKS) }),
  z.object({ type: z.literal('release'), request: z.number().int() }),
]);
export type FromWorker = z.infer<typeof FromWorkerSchema>;
