/**
 * Session policies (seed 001, D5/R5): what kind of session the engine runs is data, not a branch
 * on a kind. An iteration session and a grooming session differ only in the policy they build.
 */
import type { Iteration, Phase, TeamConfig } from './types.js';

/** Tools an agent may be offered. `Read`/`Write`/`Glob` use Claude Code's names and inputs. */
export type AgentToolName = 'pass_turn' | 'Read' | 'Write' | 'Glob';
export type CoachToolName = 'signal_phase_complete' | 'ask_pm';

export interface SessionPolicy {
  /** The iteration id or the grooming slug, written into messages as `iteration`. */
  sessionId: string;
  /** The phase the conversation is in; null outside iterations. */
  phase: Phase | null;
  /** `phase`: only the messages after the last phase boundary; `full`: the whole log. */
  historyScope: 'phase' | 'full';
  /** A coach turn after every N agent turns; null: no coach. */
  coachCadence: number | null;
  /** Append the phase's kickoff message when the phase's history is empty. */
  injectKickoff: boolean;
  stopOnPhaseComplete: boolean;
  stopOnAskPm: boolean;
  agentTools: readonly AgentToolName[];
  /**
   * The file tools take a `task` (implementation phase, layer set up): each agent's calls go to
   * the worktree of the task they name (layers/task-router.ts).
   */
  fileToolsByTask?: boolean;
  coachTools: readonly CoachToolName[];
  /** Agent turns (counted in the history in scope) after which the session completes. */
  maxTurns: number;
  /** Agents speak in parallel rounds (fan-out/fan-in), the coach synthesising each round. */
  parallel: boolean;
  currentLayer: number | null;
  /** The topic: the iteration description, or the grooming topic. */
  topic: string;
  /** Artifacts injected into agent prompts. */
  groomedSummary: string | null;
  tasksSummary: string | null;
  diffsSummary: string | null;
}

export interface IterationPolicyInput {
  config: TeamConfig;
  iteration: Iteration;
  groomedSummary: string | null;
  tasksSummary: string | null;
  diffsSummary: string | null;
  /** Whether agents get file tools (a workspace exists to write into). */
  fileTools: boolean;
  /** Whether those route by task (see `SessionPolicy.fileToolsByTask`). */
  fileToolsByTask?: boolean;
}

/** The policy of an iteration conversation in its current phase. */
export function iterationPolicy(input: IterationPolicyInput): SessionPolicy {
  const { config, iteration } = input;
  return {
    sessionId: iteration.id,
    phase: iteration.phase,
    historyScope: 'phase',
    coachCadence: config.coach === null ? null : (config.coach_cadence ?? config.agents.length),
    injectKickoff: true,
    stopOnPhaseComplete: true,
    stopOnAskPm: true,
    agentTools: input.fileTools ? ['pass_turn', 'Read', 'Write', 'Glob'] : ['pass_turn'],
    fileToolsByTask: input.fileTools && input.fileToolsByTask === true,
    coachTools: ['signal_phase_complete', 'ask_pm'],
    maxTurns: iteration.max_turns,
    parallel: config.parallel_phases.includes(iteration.phase) && config.agents.length > 1,
    currentLayer: iteration.current_layer ?? null,
    topic: iteration.description,
    groomedSummary: input.groomedSummary,
    tasksSummary: input.tasksSummary,
    diffsSummary: input.diffsSummary,
  };
}

/**
 * The policy of a freeform grooming conversation (seed section 43): no phases, no coach by
 * default, no convergence pressure, no artifacts, no file tools.
 */
export function groomingPolicy(input: {
  config: TeamConfig;
  slug: string;
  topic: string;
  maxTurns: number;
  withCoach: boolean;
}): SessionPolicy {
  return {
    sessionId: input.slug,
    phase: null,
    historyScope: 'full',
    coachCadence: input.withCoach && input.config.coach !== null ? input.config.agents.length : null,
    injectKickoff: false,
    stopOnPhaseComplete: false,
    stopOnAskPm: false,
    agentTools: ['pass_turn'],
    coachTools: [],
    maxTurns: input.maxTurns,
    parallel: false,
    currentLayer: null,
    topic: input.topic,
    groomedSummary: null,
    tasksSummary: null,
    diffsSummary: null,
  };
}
