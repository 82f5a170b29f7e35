/**
 * The team of `ratchet team` (seed 001): its agents, coach, turns and file access. Read from
 * `.team/team.json` or from the `[team]` table of `.ratchet/config.toml`; here, with the config
 * file's schema, because the config layer validates that table and workflows/team reads both.
 */
import { z } from 'zod';

/** The iteration phases, in order (R6: the first one was called `grooming`). */
export const PHASE_ORDER = ['refinement', 'planning', 'pre-code-review', 'implementation', 'code-review'] as const;
export type Phase = (typeof PHASE_ORDER)[number];

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
