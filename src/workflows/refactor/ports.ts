import type { AgentRuntime } from '../../core/agent.js';
import type { StageName } from '../../core/stages.js';
import type { UnsafeEntry } from '../../core/unsafe-entry.js';
import type { CheckResult, TestRunResult } from '../../core/verification.js';
import type { PlannedBatch } from './schemas.js';

/** The refactor run's worktree (engine-provided, over the git layer). */
export interface RefactorWorkspace {
  readonly root: string;
  head(): Promise<string>;
  /** Commits everything; returns the sha. */
  checkpoint(subject: string, body?: string): Promise<string>;
  /** Back to `commit`, dropping every change after it. */
  resetTo(commit: string): Promise<void>;
  /** `git apply --check`. */
  applyCheck(patch: string): Promise<{ ok: boolean; error: string }>;
  /** Applies all of the patch or none of it; returns the files it touched. */
  apply(patch: string): Promise<string[]>;
  /**
   * What no checkpoint may hold among the uncommitted changes: symbolic links leading outside
   * the worktree, nested repositories, gitlinks (see `UnsafeEntry`).
   */
  unsafeEntries(): Promise<UnsafeEntry[]>;
}

/**
 * A verifier command's result: a check's (exit code and output), with the per-test outcomes
 * when the command runs a test runner whose results Ratchet reads (`npm test`, `pytest`, ...).
 */
export type VerifierCommandResult = CheckResult | (TestRunResult & Pick<CheckResult, 'name' | 'ok'>);

/** Commands run in order, stopping at the first failure. */
export interface CommandsRun {
  ok: boolean;
  results: Array<{ result: VerifierCommandResult; outputFile: string | null }>;
}

/** `baseline`: every full verifier command, then the fast ones not among them (seed 002, 9.1). */
type VerifierLevel = 'fast' | 'full' | 'baseline';

export interface VerifierRun extends CommandsRun {
  level: VerifierLevel;
}

export interface RefactorVerifier {
  /** Runs the level's verifier commands in the worktree, in order, stopping at the first failure. */
  run(level: VerifierLevel, stage: StageName, signal?: AbortSignal): Promise<VerifierRun>;
}

export interface ApiChange {
  removed: string[];
  changed: string[];
  added: string[];
}

export interface PatchAdmissionResult {
  admitted: boolean;
  /** The normalised patch to apply (what `git apply` accepts). */
  patchText: string;
  files: string[];
  loc: number;
  /** Messages written for the model's retry prompt. */
  violations: string[];
}

/** What the formatter of a formatting-only batch did (seed 002, 17.3). */
export interface FormatResult {
  /** The formatter commands. */
  run: CommandsRun;
  /** Files left reformatted: in the batch's scope and changed in layout only. */
  files: string[];
  /** Lines those files changed (added + removed). */
  loc: number;
  /** Every other change the formatter made, restored, each as `<path>: <why>`. */
  reverted: string[];
}

export interface RefactorDependencies {
  workspace: RefactorWorkspace;
  verifier: RefactorVerifier;
  agentFor(role: 'PATCHER' | 'CRITIC'): AgentRuntime;
  /** System prompts of the roles (versioned files shipped with the package). */
  systemPrompt(role: 'PATCHER' | 'CRITIC'): string;
  /** The context packet for one batch (seed 002, section 13), within budgets. */
  contextFor(batch: PlannedBatch, feedback: string | null): Promise<string>;
  /** Admission checks of seed 002, 17.1. */
  admit(batch: PlannedBatch, patch: string, declaredFiles: string[]): Promise<PatchAdmissionResult>;
  /**
   * A formatting-only batch: runs the configured formatter in the worktree, then keeps only the
   * changes to files within the batch's scope (minus `scope_excludes`) that leave their syntax
   * as it was; it restores every other file the formatter changed, created or deleted.
   */
  format(batch: PlannedBatch, signal?: AbortSignal): Promise<FormatResult>;
  /** Public API of the worktree now, compared with the snapshot at the last checkpoint. */
  apiChanges(): Promise<ApiChange>;
  /** Records the new checkpoint's API as the reference for the next comparison. */
  acceptApi(): Promise<void>;
  /** Appends a line to TASK_LEDGER.jsonl (the run's project memory). */
  appendTaskLedger(entry: Record<string, unknown>): Promise<void>;
  /** The current time (the engine's clock), for the max runtime. */
  now(): Date;
}

export interface RefactorPolicy {
  retryPerBatch: number;
  runFullVerifierEvery: number;
  allowPublicApiChanges: boolean;
  useCritic: boolean;
  maxTurnsPatcher: number;
  bashTimeoutMs: number;
  /**
   * Seed 002, section 19 (max runtime): once the batch loop has run this long, it stops before
   * starting the next batch (never in the middle of one). Null: no limit.
   */
  maxRuntimeMs: number | null;
}
