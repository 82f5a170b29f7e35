import type { AgentRuntime } from '../../core/agent.js';
import type { HandoffState } from '../../core/handoff.js';
import type { AgentStageName, StageName } from '../../core/stages.js';
import type { UnsafeEntry } from '../../core/unsafe-entry.js';
import type { CheckResult, TestRunResult } from '../../core/verification.js';
import type { VerificationLock } from '../../verify/verification-files.js';
import type { TestReviewPort } from './test-review.js';

/**
 * What the TDD workflow needs from the outside world, passed in explicitly (DESIGN.md,
 * principle 5). The engine implements these over the git, verify and agent layers; tests can
 * implement them over anything.
 */

/** The run's worktree: checkpoints, rollbacks and handoff notes. */
export interface Workspace {
  /** Absolute path of the worktree. */
  readonly root: string;
  /** HEAD's sha. Implementations may cache it between their own operations. */
  head(): Promise<string>;
  /** Forgets anything cached about the repository: someone else (an agent) may have changed it. */
  refresh(): void;
  /**
   * Stages everything and commits; returns the sha. An empty commit needs `allowEmpty`. With
   * `note`, the handoff note is written on the new commit in the same step. Refuses (`gate-failed`)
   * a tree with unsafe entries (`unsafeEntries`) among its changes.
   */
  checkpoint(subject: string, options?: { allowEmpty?: boolean; body?: string; note?: HandoffState }): Promise<string>;
  hasChanges(): Promise<boolean>;
  /** Drops uncommitted changes (tracked and untracked, not ignored files). */
  discardChanges(): Promise<void>;
  /** Moves the branch back to `commit` and drops everything after it. */
  resetTo(commit: string): Promise<void>;
  /** Undoes commits made after `commit` but keeps their changes in the working tree. */
  uncommitTo(commit: string): Promise<void>;
  /** Paths changed since `commit`, including uncommitted and untracked ones. */
  changedFilesSince(commit: string): Promise<string[]>;
  /** Writes the handoff note on `commit` (overwriting any). */
  writeNote(commit: string, state: HandoffState): Promise<void>;
  readFile(path: string): Promise<string | null>;
  /** A file's content in `commit` (null when it is not there). */
  readFileAt(commit: string, path: string): Promise<string | null>;
  writeFile(path: string, text: string): Promise<void>;
  /** Deletes a file of the working tree (nothing when it is not there). */
  removeFile(path: string): Promise<void>;
  /**
   * What no checkpoint may hold, among `paths` (changed paths) and in the index: symbolic links
   * whose resolution leaves the worktree (the directories on each path included), nested
   * repositories, and gitlinks staged against HEAD (see `UnsafeEntry`).
   */
  unsafeEntries(paths: readonly string[]): Promise<UnsafeEntry[]>;
  /**
   * Takes `entries` out: a link or a nested repository's directory is removed and what `commit`
   * had at its path comes back (a file, a link, a directory's files); a gitlink goes back to
   * `commit`'s index entry.
   */
  removeUnsafeEntries(entries: readonly UnsafeEntry[], commit: string): Promise<void>;
}

export interface StoredTestRun {
  result: TestRunResult;
  /** Where the full output was kept, for the ledger (relative to the repository). */
  outputFile: string | null;
}

export interface StoredCheck {
  kind: 'lint' | 'typecheck';
  result: CheckResult;
  outputFile: string | null;
}

export interface VerifierPort {
  /** Runs the whole test suite in the worktree. */
  runTests(stage: StageName, signal?: AbortSignal): Promise<StoredTestRun>;
  /** Runs the configured lint and typecheck commands (none configured: empty list). */
  runChecks(stage: StageName, signal?: AbortSignal): Promise<StoredCheck[]>;
  /** The test command, for prompts. */
  readonly testCommand: string;
  /**
   * The files, and parts of files, that decide how the test, lint and typecheck commands run and
   * report, as they are now in the worktree (see `lockVerification`): locked after RED.
   */
  lockVerification(): Promise<VerificationLock>;
}

export interface RefactorCheckResult {
  needsRefactor: boolean;
  reasons: string[];
}

export interface RenderedPrompt {
  system: string;
  user: string;
}

interface StageSettings {
  maxAttempts: number;
  maxTurns: number;
  /** Wall-clock limit of one agent call of the stage; an attempt over it is stopped and rejected. */
  timeoutMs: number;
}

export interface TddDependencies {
  workspace: Workspace;
  verifier: VerifierPort;
  /** The agent runtime for a stage (stages may use different models). */
  agentFor(stage: AgentStageName): AgentRuntime;
  /** Renders a stage's prompts with the given variables. */
  prompt(stage: AgentStageName, variables: Record<string, string | number>): RenderedPrompt;
  /** The static size checker (seed 000), used when `refactor = "when-needed"`. */
  refactorCheck(files: string[]): Promise<RefactorCheckResult>;
  /** The static review of test quality after RED (seed 000), with its circuit breaker; absent: off (`[tdd] review_tests = false`). */
  testReview?: TestReviewPort;
}

/**
 * The stages that number their attempts, each with a count of its own per cycle: RED and RED_FIX
 * share RED's (RED_FIX is a later RED attempt); RE_VERIFY takes the number of the FIX or REFACTOR
 * attempt it gates.
 */
export type AttemptCounter = 'PLAN' | 'RED' | 'GREEN' | 'VERIFY' | 'FIX' | 'REFACTOR';

/** The counter a stage's attempts are numbered by; null for RE_VERIFY (and stages of other workflows). */
export function attemptCounterOf(stage: StageName): AttemptCounter | null {
  if (stage === 'RED_FIX') return 'RED';
  return stage === 'PLAN' ||
    stage === 'RED' ||
    stage === 'GREEN' ||
    stage === 'VERIFY' ||
    stage === 'FIX' ||
    stage === 'REFACTOR'
    ? stage
    : null;
}

/**
 * Attempts of a stage in one cycle that processes before this one made after the checkpoint the
 * run resumes from, before they were killed or interrupted: the resumed stage numbers its
 * attempts on from `last`, and has as many left as its limit leaves once the rejected ones are
 * counted (see `resumeTdd`).
 */
export interface PriorAttempts {
  cycle: number;
  stage: AttemptCounter;
  /** The highest attempt number recorded. */
  last: number;
  /**
   * Why the attempts the gate rejected were, oldest first: each counts against the stage's limit.
   * An attempt cut short (by the kill or the interruption) does not, nor does one whose work the
   * stop discarded after it was accepted (GREEN's, while VERIFY or FIX ran).
   */
  rejections: string[];
}

export interface TddPolicy {
  feature: string;
  refactor: 'always' | 'when-needed' | 'never';
  /** Globs of test files: locked after RED. */
  testGlobs: string[];
  bashTimeoutMs: number;
  stage(stage: AgentStageName): StageSettings;
  runId: string;
  /**
   * The commit the run started from. It is the user's, not a checkpoint of the run: an error
   * before the first checkpoint is recorded in the ledger only, never as a note on it (a note
   * there would replace another run's).
   */
  baseCommit: string;
  /**
   * The files of the task a tasks run runs this pipeline for: PLAN must name exactly these as the
   * test and implementation file (absent for `ratchet tdd`, where PLAN chooses).
   */
  taskFiles?: TaskFiles;
}

export interface TaskFiles {
  task: string;
  testFile: string;
  implFile: string;
  /** Files the run's other tasks own (their test and implementation files), each with its task's key. */
  ownedByOthers: Readonly<Record<string, string>>;
}
