import type { ZodType } from 'zod';
import type { StageName } from './stages.js';
import type { TokenUsage } from './model.js';
import type { EventInput } from './events.js';

/** Which paths a stage's tools may touch, as globs relative to the worktree. */
export interface PathPolicy {
  /** Globs that may be read (default: everything). */
  read: string[];
  /** Globs that may be written or edited. */
  write: string[];
  /** Globs that may never be written, even when `write` matches (e.g. test files in GREEN). */
  denyWrite: string[];
}

export interface StageRequest<T = unknown> {
  stage: StageName;
  /** Absolute path of the worktree; every tool path resolves inside it. */
  worktree: string;
  systemPrompt: string;
  prompt: string;
  paths: PathPolicy;
  /** Stop after this many model turns (runaway-loop guard). */
  maxTurns: number;
  /** Timeout for each Bash command, in ms (the whole process group is killed). */
  bashTimeoutMs: number;
  /** When set, the stage must end with an output matching this schema (structured output). */
  outputSchema?: ZodType<T>;
  signal?: AbortSignal;
  /** Receives `tool-call`, `model-call`, `model-retry`, `model-delta` events. */
  emit: (event: EventInput) => void;
}

export type StageOutcome<T = unknown> =
  | {
      status: 'completed';
      finalText: string;
      /** Parsed structured output (present when `outputSchema` was given). */
      output: T | undefined;
      turns: number;
      usage: TokenUsage;
      costUsd: number | null;
    }
  | {
      /**
       * `turn-limit`: the turn limit was reached before the agent finished; `invalid-output`: no
       * valid structured result; `path-violation`: it changed files its stage may not write
       * (put back by the orchestrator); `timeout`: stopped at the stage's time limit.
       */
      status: 'turn-limit' | 'invalid-output' | 'path-violation' | 'timeout';
      finalText: string;
      output: undefined;
      turns: number;
      usage: TokenUsage;
      costUsd: number | null;
      message: string;
    };

export interface AgentRuntime {
  readonly name: string;
  /**
   * Every change it makes to files goes through the stage's file guard, except what its `Bash`
   * tool runs (reported as `tool-call` events): a stage without a Bash call cannot have written
   * outside its policy or committed, and needs no check afterwards.
   */
  readonly guardsWrites?: boolean;
  /** Runs one stage to completion. Throws RatchetError for provider/auth/interrupt failures. */
  runStage<T>(request: StageRequest<T>): Promise<StageOutcome<T>>;
}
