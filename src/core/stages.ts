/**
 * Stage names. The TDD phases of seed 003 (PLAN, RED, GREEN, REFACTOR, COMPLETE) are what the
 * handoff note records; the pipeline stages of seed 000 (RED_FIX, VERIFY, RE_VERIFY, FIX) are
 * attempts within those phases and are recorded in the ledger.
 */
export const PHASES = ['PLAN', 'RED', 'GREEN', 'REFACTOR', 'COMPLETE'] as const;
export type Phase = (typeof PHASES)[number];

/** The phases stage events belong to: the TDD phases, plus those of the refactor workflow. */
/** `BENCH`: an exercise of `ratchet bench polyglot` (its EXERCISE tries). */
export type StagePhase = Phase | 'SETUP' | 'BATCH' | 'SOLVE' | 'BENCH';

export type StageName =
  | 'PLAN'
  | 'RED'
  | 'RED_FIX'
  | 'GREEN'
  | 'VERIFY'
  | 'FIX'
  | 'REFACTOR'
  | 'RE_VERIFY'
  // The static review of test quality after RED (seed 000's `review`): no model, one row per RED attempt its gate accepted.
  | 'REVIEW_TESTS'
  // Refactor workflow (seed 002): baseline, planner/patcher/critic roles, the formatter of
  // formatting-only batches, fast/full verifiers.
  | 'BASELINE'
  | 'PLANNER'
  | 'PATCHER'
  | 'CRITIC'
  | 'FORMAT'
  | 'FAST_VERIFY'
  | 'FULL_VERIFY'
  // Plan/solve workflow (seed 004): its passes, and the retrieval stage that grades candidates.
  | SolvePassStage
  | 'PRECISION'
  // `ratchet bench polyglot --mode direct`: one try at a benchmark exercise.
  | 'EXERCISE'
  // `ratchet team`: the speakers and the extractions (the `Stage:` line of their prompts).
  | TeamStage;

/** The model calls of `ratchet team`, by the `Stage:` line their system prompt starts with. */
export const TEAM_STAGES = ['AGENT', 'COACH', 'EXTRACT_REFINEMENT', 'EXTRACT_TASKS', 'EXTRACT_NOTES'] as const;
export type TeamStage = (typeof TEAM_STAGES)[number];

/** The passes of the solve workflow that answer with a plan or with edits (seed 004). */
export type SolvePassStage = 'META_PLAN' | 'PART_PLAN' | 'IMPLEMENT' | 'ADJUSTMENT';

/** Stages that run an agent (the others only run verification). */
export const AGENT_STAGES = ['PLAN', 'RED', 'RED_FIX', 'GREEN', 'FIX', 'REFACTOR'] as const;
export type AgentStageName = (typeof AGENT_STAGES)[number];
