/**
 * The team workflow's domain shapes (seed 001, D1). Files keep the seed's snake_case keys and the
 * message key `from`; every shape is a loose object, so fields a later version adds survive a
 * read and a write (`z.looseObject` keeps unknown keys, the seed's reason for TypedDict).
 */
import { z } from 'zod';
import { PHASE_ORDER, type Phase } from '../../config/team-schema.js';

export { PHASE_ORDER, type Phase } from '../../config/team-schema.js';

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

// The team's configuration is read from `.team/team.json` or `[team]` of `.ratchet/config.toml`,
// so its schema lives with the config file's (config/team-schema.ts).
export { FileAccessSchema, TeamConfigSchema, type FileAccess, type TeamConfig } from '../../config/team-schema.js';

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
