/** Per-test outcomes of one run of the project's test command. */
export type TestStatus = 'passed' | 'failed' | 'skipped';

/**
 * Why a test failed: an assertion (the only kind RED accepts), an error thrown in the test,
 * a collection/import/syntax/compile error (the file never ran), a timeout, or `missing`: it
 * passed before and did not run now (deleted, renamed or skipped; a refactor batch's verifier).
 */
export type FailureKind = 'assertion' | 'error' | 'collection' | 'timeout' | 'missing';

export interface TestCaseResult {
  /** Stable id: `<file or suite>::<name>`; the same test has the same id across runs. */
  id: string;
  name: string;
  file: string | null;
  status: TestStatus;
  failureKind?: FailureKind;
  message?: string;
  durationMs?: number;
}

export type ResultSource =
  'junit-xml' | 'tap' | 'pytest' | 'unittest' | 'jest-json' | 'go-json' | 'cargo' | 'exit-code';

/** Why a run's results cannot be taken for a pass (see `TestRunResult.problem`). */
export interface ResultProblem {
  /**
   * `unreadable`: no per-test result could be read at all. `inconsistent`: the results disagree
   * with the runner's exit code or its own summary, or the report it was asked to write is
   * missing or broken although it exited 0 (a runner stopped early, a report tampered with).
   */
  kind: 'unreadable' | 'inconsistent';
  message: string;
  /** What to configure about it, when the user can. */
  hint?: string;
}

export interface TestRunResult {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** Combined stdout+stderr, capped. */
  output: string;
  tests: TestCaseResult[];
  /** Errors outside any test (a file that failed to import/compile, a crashed runner). */
  collectionErrors: string[];
  source: ResultSource;
  counts: { passed: number; failed: number; skipped: number; total: number };
  /** Set when these results cannot be taken for a pass, whatever they say: every gate then rejects. */
  problem?: ResultProblem;
}

/** Result of a non-test check (lint, typecheck). */
export interface CheckResult {
  name: string;
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  output: string;
  ok: boolean;
}
