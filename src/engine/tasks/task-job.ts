import { z } from 'zod';
import type { EventInput } from '../../core/events.js';
import { HandoffStateSchema } from '../../core/handoff.js';
import type { StageName } from '../../core/stages.js';
import { FRAMEWORKS } from '../../verify/detect.js';
import { TaskSpecSchema } from '../../workflows/tasks/tasks-file.js';

/**
 * What crosses the Redis queue between a tasks run's coordinator and its workers, as zod schemas:
 * both sides validate what they read (another process, maybe another version or whoever else can
 * write to that Redis, wrote it). The coordinator takes from a worker only the events of a task's
 * pipeline (stages, model and tool calls, test runs, checkpoints, notes, warnings) and tags them
 * with the job's task itself; anything else a worker sends is dropped with a warning.
 */

/** A task attempt's job: the task and its dependencies, its start point, and where to fetch and push. */
export const TaskJobPayloadSchema = z.object({
  task: TaskSpecSchema,
  dependencies: z.array(TaskSpecSchema),
  /** The run's other tasks: the files they own, which the task's PLAN may not name (none from an older coordinator). */
  others: z.array(TaskSpecSchema).default([]),
  startPoint: z.string().regex(/^[0-9a-f]{40,64}$/),
  /** The published repository (a path or URL the workers reach). */
  repository: z.string().min(1),
  /** The run branch there (`ratchet/<run-id>`), which holds `startPoint`. */
  runBranch: z.string().regex(/^ratchet\/[A-Za-z0-9._-]+$/),
  /** The branch the worker pushes the task's commits to. */
  taskBranch: z.string().regex(/^ratchet\/[A-Za-z0-9._-]+$/),
  settings: z.object({
    testCommand: z.string().min(1),
    framework: z.enum(FRAMEWORKS),
    refactor: z.enum(['always', 'when-needed', 'never']),
  }),
});
export type TaskJobPayload = z.infer<typeof TaskJobPayloadSchema>;

export const TaskJobResultSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('done'), head: z.string().regex(/^[0-9a-f]{40,64}$/) }),
  z.object({ status: z.literal('failed'), reason: z.string(), code: z.string() }),
]);
export type TaskJobResult = z.infer<typeof TaskJobResultSchema>;

const STAGES = [
  'PLAN',
  'RED',
  'RED_FIX',
  'GREEN',
  'VERIFY',
  'FIX',
  'REFACTOR',
  'RE_VERIFY',
] as const satisfies readonly StageName[];
const Stage = z.enum(STAGES);
const Phase = z.enum(['PLAN', 'RED', 'GREEN', 'REFACTOR', 'COMPLETE']);
const Sha = z.string().regex(/^[0-9a-f]{7,64}$/);

const ToolCallSchema = z.object({ id: z.string(), name: z.string(), input: z.unknown() });
const MessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({ role: z.literal('assistant'), text: z.string(), toolCalls: z.array(ToolCallSchema) }),
  z.object({
    role: z.literal('tool'),
    results: z.array(
      z.object({ toolCallId: z.string(), toolName: z.string(), output: z.string(), isError: z.boolean() }),
    ),
  }),
]);
const RequestSchema = z.object({
  system: z.string(),
  messages: z.array(MessageSchema),
  tools: z.array(
    z.object({ name: z.string(), description: z.string(), inputSchema: z.record(z.string(), z.unknown()) }),
  ),
  maxOutputTokens: z.number().optional(),
  temperature: z.number().optional(),
});
const ResponseSchema = z.object({
  text: z.string(),
  toolCalls: z.array(ToolCallSchema),
  finishReason: z.enum(['stop', 'tool-calls', 'length', 'content-filter', 'error', 'other']),
  usage: z.object({ inputTokens: z.number().nullable(), outputTokens: z.number().nullable() }),
  costUsd: z.number().nullable(),
  model: z.string(),
  provider: z.string(),
  latencyMs: z.number(),
});
/** A test run's result (`TestRunResult`). */
export const TestRunSchema = z.object({
  command: z.string(),
  exitCode: z.number().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  output: z.string(),
  tests: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      file: z.string().nullable(),
      status: z.enum(['passed', 'failed', 'skipped']),
      failureKind: z.enum(['assertion', 'error', 'collection', 'timeout', 'missing']).optional(),
      message: z.string().optional(),
      durationMs: z.number().optional(),
    }),
  ),
  collectionErrors: z.array(z.string()),
  source: z.enum(['junit-xml', 'tap', 'pytest', 'unittest', 'jest-json', 'go-json', 'cargo', 'exit-code']),
  counts: z.object({ passed: z.number(), failed: z.number(), skipped: z.number(), total: z.number() }),
  problem: z
    .object({ kind: z.enum(['unreadable', 'inconsistent']), message: z.string(), hint: z.string().optional() })
    .optional(),
});
const CheckSchema = z.object({
  name: z.string(),
  command: z.string(),
  exitCode: z.number().nullable(),
  timedOut: z.boolean(),
  durationMs: z.number(),
  output: z.string(),
  ok: z.boolean(),
});
const StageFields = { stage: Stage, phase: Phase, attempt: z.number().int(), cycle: z.number().int() };

/** The events of a task's pipeline a worker may stream (their `task` is the coordinator's to set). */
const RemoteEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('cycle-start'), cycle: z.number().int(), test: z.string().nullable() }),
  z.object({ type: z.literal('stage-start'), ...StageFields }),
  z.object({
    type: z.literal('stage-end'),
    ...StageFields,
    outcome: z.enum(['accepted', 'rejected', 'error', 'skipped']),
    reason: z.string().optional(),
    subjects: z.array(z.string()).optional(),
  }),
  z.object({
    type: z.literal('model-call'),
    stage: Stage.nullable(),
    provider: z.string(),
    model: z.string(),
    request: RequestSchema,
    response: ResponseSchema.nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    latencyMs: z.number(),
  }),
  z.object({
    type: z.literal('model-retry'),
    provider: z.string(),
    model: z.string(),
    attempt: z.number(),
    delayMs: z.number(),
    reason: z.string(),
  }),
  z.object({
    type: z.literal('tool-call'),
    stage: Stage.nullable(),
    tool: z.string(),
    input: z.unknown(),
    output: z.string(),
    isError: z.boolean(),
    durationMs: z.number(),
  }),
  z.object({
    type: z.literal('verify-end'),
    stage: Stage,
    kind: z.enum(['test', 'lint', 'typecheck']),
    result: z.union([TestRunSchema, CheckSchema]),
    // A path on the worker's machine means nothing here.
    outputFile: z
      .string()
      .nullable()
      .transform(() => null),
  }),
  z.object({ type: z.literal('checkpoint-create'), stage: Stage, phase: Phase, commit: Sha, subject: z.string() }),
  z.object({ type: z.literal('checkpoint-rollback'), stage: Stage, to: Sha, reason: z.string() }),
  z.object({ type: z.literal('note-write'), commit: Sha, state: HandoffStateSchema }),
  z.object({
    type: z.literal('plan-select'),
    cycle: z.number().int(),
    test: z.string().nullable(),
    testFile: z.string().nullable(),
    implFile: z.string().nullable(),
  }),
  z.object({ type: z.literal('warning'), message: z.string(), stage: Stage.optional() }),
  z.object({ type: z.literal('log'), message: z.string() }),
]);

/** The event a worker streamed, as the coordinator records it (tagged with `task`), or why it is refused. */
export function remoteEvent(
  value: unknown,
  task: string,
): { ok: true; event: EventInput } | { ok: false; why: string } {
  const parsed = RemoteEventSchema.safeParse(value);
  if (!parsed.success) return { ok: false, why: parsed.error.issues[0]?.message ?? 'not an event of a task pipeline' };
  return { ok: true, event: { ...parsed.data, task } as EventInput };
}

/** The types a worker streams: the events `remoteEvent` takes. */
export function isStreamedEvent(event: EventInput): boolean {
  return RemoteEventSchema.options.some((option) => option.shape.type.value === event.type);
}
