import type { EventInput } from '../../core/events.js';
import type { ModelClient } from '../../core/model.js';
import type { StageName } from '../../core/stages.js';
import type { CheckResult, TestRunResult } from '../../core/verification.js';
import type { CodeIndex } from '../../code/index/types.js';
import type { RetrievalStage } from '../../context/context-package.js';
import type { TokenBudget } from '../../context/prompt-budget.js';
import type { SearchReplaceBlock } from '../../edit/search-replace.js';
import type { VerificationLock } from '../../verify/verification-files.js';
import type { SolveProgress } from './progress.js';
import type { SolvePromptStage, SolvePrompts } from './prompts.js';

/**
 * What the solve workflow needs from the outside world, passed in explicitly (DESIGN.md,
 * principle 5). The engine implements these over the run's worktree, sandbox and models
 * (`git-workspace.ts` here is the worktree's); tests implement them over anything.
 */

/** What applying a step's edits did: all of them, or none (with why, per edit). */
type EditApplication = { ok: true; files: string[] } | { ok: false; failures: string[] };

/** The run's worktree. */
export interface SolveWorkspace {
  readonly root: string;
  head(): Promise<string>;
  /** A file of the worktree as it is now (null when absent). */
  readFile(path: string): Promise<string | null>;
  /** Applies a step's edits all or none (see `applyEditsToDirectory`). */
  applyEdits(blocks: readonly SearchReplaceBlock[]): Promise<EditApplication>;
  /** Drops every uncommitted change: the worktree is back at HEAD. */
  discardChanges(): Promise<void>;
  /** The changes since `commit`, committed or not, as a unified diff. */
  diffSince(commit: string): Promise<string>;
  /**
   * Commits everything (an empty commit when nothing changed) and keeps `progress` with it, where
   * a resumed run finds it; returns the sha.
   */
  checkpoint(subject: string, progress: SolveProgress): Promise<string>;
}

interface StoredTestRun {
  result: TestRunResult;
  /** Where the full output was kept (relative to the repository). */
  outputFile: string | null;
}

interface StoredCheck {
  kind: 'lint' | 'typecheck';
  result: CheckResult;
  outputFile: string | null;
}

/** The project's own test, lint and typecheck commands in the worktree (the TDD workflow's `VerifierPort` fits). */
export interface SolveVerifier {
  readonly testCommand: string;
  runTests(stage: StageName, signal?: AbortSignal): Promise<StoredTestRun>;
  /** Lint and typecheck when configured: informational here, they never fail a step. */
  runChecks(stage: StageName, signal?: AbortSignal): Promise<StoredCheck[]>;
  /** The files that decide how the commands run and report: no edit may change them. */
  lockVerification(): Promise<VerificationLock>;
}

/** The models of the run: one client per stage (retries included), and each stage's budget. */
export interface SolveModels {
  client(stage: SolvePromptStage, emit: (event: EventInput) => void): ModelClient;
  /** The model's context window and `[budget] reserved_tokens` (see `contextWindowFor`). */
  budget(stage: SolvePromptStage): TokenBudget;
  /** Output tokens asked for per call (`maxOutputTokensFor`). */
  maxOutputTokens(stage: SolvePromptStage): number;
}

export interface SolveDependencies {
  workspace: SolveWorkspace;
  verifier: SolveVerifier;
  models: SolveModels;
  prompts: SolvePrompts;
  /** The code index of the worktree as it is now (the engine rebuilds it incrementally). */
  index(): Promise<CodeIndex>;
}

export interface SolvePolicy {
  task: string;
  runId: string;
  /** The commit the run started from: the diff since it is the "changes made so far". */
  baseCommit: string;
  stages: readonly RetrievalStage[];
  /** `[solve] max_retries_per_step`. */
  maxRetriesPerStep: number;
  /** `[solve] max_full_files`. */
  maxFullFiles: number;
  /** `[solve] context`: the context pack, or every candidate whole (the bench's baseline). */
  context?: 'pack' | 'whole-files';
  /** Answers of a plan pass that may be rejected (unparsable, invalid) before the pass fails (default 2). */
  maxPlanAttempts?: number;
  /** Steps a part may grow to through adjustments (default 12): a runaway planner stops there. */
  maxStepsPerPart?: number;
}
