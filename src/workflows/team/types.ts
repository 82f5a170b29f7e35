/**
 * The team workflow's domain shapes (seed 001, D1). Files keep the seed's snake_case keys and the
 * message key `from`; every shape is a loose object, so fields a later version adds survive a
 * read and a write (`z.looseObject` keeps unknown keys, the seed's reason for TypedDict).
 */
import { z } from 'zod';

/** The iteration phases, in order (R6: the first one was called `grooming`). */
export const PHASE_ORDER = ['refinement', 'planning', 'pre-code-review', 'implementation', 'code-review'] as const;
export type Phase = (typeof PHASE_ORDER)[number];

/** A phase name as files hold it: `grooming` (before R6) reads as `refinement`. */
const PhaseSchema = z.preprocess((value) => (value === 'grooming' ? 'refinement' : value), z.enum(PHASE_ORDER));

/** The phase after `phase`, or null after the last one. */
export function nextPhase(phase: Phase): Phase | null {
  return PHASE_ORDER[PHASE_ORDER.indexOf(phase) + 1] ?? null;
}

/** One line of `conversation.jsonl`. */
export const TeamMessageSchema = z.looseObject({
  from: z.string(),
  iteration: z.string().optional(),
  content: z.string(),
  /** A system note recording that an agent passed its turn. */
  pass_turn: z.boolean().optional(),
  /** The marker between two phases; history scoped to a phase starts after the last one. */
  phase_boundary: z.boolean().optional(),
  from_phase: z.string().optional(),
  to_phase: z.string().optional(),
  layer: z.number().int().optional(),
});
export type TeamMessage = z.infer<typeof TeamMessageSchema>;

/** The `from` of messages Ratchet writes itself (kickoffs, pass notes, boundaries, denials). */
export const SYSTEM_SENDER = 'system';
/** The `from` of the user's answers (`team continue -m`). */
export const PM_SENDER = 'pm';

const IterationStatusSchema = z.enum(['pending', 'in-progress', 'done']);

/** `iteration.json` of one iteration. */
export const IterationSchema = z.looseObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/),
  description: z.string(),
  status: IterationStatusSchema,
  phase: PhaseSchema,
  /** Agent turns allowed in the current phase's conversation. */
  max_turns: z.number().int().positive(),
  current_layer: z.number().int().nonnegative().optional(),
  title: z.string().optional(),
});
export type Iteration = z.infer<typeof IterationSchema>;

/** One task of `tasks.json` (written by the planning extraction). */
export const TeamTaskSchema = z.looseObject({
  id: z.string().min(1),
  description: z.string(),
  done_criteria: z.string().default(''),
  depends_on: z.array(z.string()).default([]),
  assigned_to: z.string().default(''),
  status: z.string().default('pending'),
  /** 0 for tasks without dependencies, else one more than the deepest dependency. */
  layer: z.number().int().nonnegative().optional(),
  /** Implementation notes (pre-code-review extraction). */
  notes: z.string().optional(),
});
export type TeamTask = z.infer<typeof TeamTaskSchema>;

/** One agent of the team. */
const AgentConfigSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'agent names are letters, digits, - and _'),
  role: z.string().default('Software Engineer'),
  /** Model id for this agent; default the provider's model (`--model` or `[provider] model`). */
  model: z.string().optional(),
});

const CoachConfigSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/)
    .default('coach'),
  role: z.string().default('Agile Coach'),
  model: z.string().optional(),
});

/**
 * What agents may write (seed's `file_access`): writes matching `writable_paths` and no
 * `protected_paths` land directly; with `enable_approvals`, any other write inside the workspace
 * becomes a pending approval instead of an error. `.git` is never writable.
 */
export const FileAccessSchema = z.strictObject({
  writable_paths: z.array(z.string()).default(['docs/**', 'src/**', 'test/**', 'tests/**']),
  protected_paths: z.array(z.string()).default(['.team/**', '.ratchet/**', '.github/**']),
  enable_approvals: z.boolean().default(true),
  max_file_size_bytes: z.number().int().positive().default(1_048_576),
  max_files_per_turn: z.number().int().positive().default(10),
});
export type FileAccess = z.infer<typeof FileAccessSchema>;

/** `.team/team.json`. */
export const TeamConfigSchema = z.strictObject({
  agents: z.array(AgentConfigSchema).min(1),
  /** Null: no coach (no facilitation, no extraction). */
  coach: CoachConfigSchema.nullable().default({ name: 'coach', role: 'Agile Coach' }),
  /** Agent turns between two coach turns; default the number of agents (one round). */
  coach_cadence: z.number().int().positive().optional(),
  max_turns: z.number().int().positive().default(30),
  file_access: FileAccessSchema.default(FileAccessSchema.parse({})),
  /** Phases whose agent turns run in parallel (fan-out/fan-in), the coach synthesising each round. */
  parallel_phases: z.array(z.enum(PHASE_ORDER)).default(['pre-code-review', 'implementation']),
});
export type TeamConfig = z.infer<typeof TeamConfigSchema>;

/** A write outside the writable paths waiting for the user (`team approve` / `team deny`). */
export const ApprovalSchema = z.looseObject({
  id: z.string(),
  agent: z.string(),
  /** Path relative to `worktree` (POSIX). */
  path: z.string(),
  content: z.string(),
  /**
   * The worktree the write goes to: the iteration's workspace, or in the implementation phase
   * the worktree of the agent's task. Absent (approvals of older files): the iteration's workspace.
   */
  worktree: z.string().optional(),
  status: z.enum(['pending', 'approved', 'denied']),
  phase: z.string().optional(),
  /** Why the user denied it (`deny -m`). */
  reason: z.string().optional(),
});
export type Approval = z.infer<typeof ApprovalSchema>;
