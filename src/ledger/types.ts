import type { EventMap, EventType, RatchetEvent, SolveContextSummary, SolvePassType } from '../core/events.js';
import type { FinishReason } from '../core/model.js';
import type { FailureKind } from '../core/verification.js';
import type { StagePhase as Phase, StageName } from '../core/stages.js';
import type { TaskLedger } from './task-types.js';

/**
 * The ledger contract (version `ratchet-ledger-v1`): the engine writes runs and events into it,
 * `status` / `history` / `report` read them back. Rows use camelCase; timestamps are ISO 8601.
 * Every string stored has been through the ledger's redactor (see `redact.ts`).
 */

/**
 * Lifecycle of a run: `running`, then how it ended (`completed`, `failed`, `interrupted` — the
 * `run-end` statuses; `interrupted` runs can be resumed), then, after `ratchet accept` /
 * `ratchet reject`, `accepted` or `rejected`; a refactor run restored from its backup by
 * `ratchet refactor rollback` (accepted or not) is `rolled-back`, with a `backup-restore` event.
 */
export type RunStatus = 'running' | EventMap['run-end']['status'] | 'accepted' | 'rejected' | 'rolled-back';

/** How a stage attempt ended. */
export type StageAttemptOutcome = EventMap['stage-end']['outcome'];

/** Kinds of verification recorded by `verify-end`. */
export type VerificationKind = EventMap['verify-end']['kind'];

/** The settings of a run that `createRun` stores and `updateRun` may change. */
interface RunSettings {
  status?: RunStatus;
  branch?: string | null;
  baseBranch?: string | null;
  baseCommit?: string | null;
  worktree?: string | null;
  provider?: string | null;
  model?: string | null;
  /** The resolved configuration, stored as JSON (redacted). */
  config?: unknown;
  /** The branch's last commit when the run was accepted or rejected (the branch is then gone). */
  finalCommit?: string | null;
}

/** What `createRun` needs. Fields left out are stored as null (status defaults to `running`). */
export interface NewRun extends RunSettings {
  /** The run id, e.g. `20261121-233624-a1b2`. */
  id: string;
  /** `tdd`, `tasks`, `refactor`, `solve`, `team`. */
  workflow: string;
  /** Absolute path of the user's repository. */
  repoRoot: string;
  /** The feature request, task or goal the run works on. */
  feature: string;
}

/**
 * Fields `updateRun` may change. `finishedAt` is managed for you unless given: set to now when
 * the status becomes `completed`, `failed` or `interrupted`, cleared when it returns to `running`,
 * and kept (or set to now when there is none) on `accepted` / `rejected` / `rolled-back`.
 */
export interface RunPatch extends RunSettings {
  /** Why the run failed; null clears it. */
  error?: string | null;
  finishedAt?: string | null;
}

export interface RunRow {
  id: string;
  workflow: string;
  repoRoot: string;
  feature: string;
  status: RunStatus;
  branch: string | null;
  baseBranch: string | null;
  baseCommit: string | null;
  worktree: string | null;
  provider: string | null;
  model: string | null;
  /** The stored configuration (parsed JSON), null when none was given. */
  config: unknown;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  /** The branch's last commit when the run was accepted or rejected (the branch is then gone). */
  finalCommit: string | null;
}

/** One attempt of one stage: opened by `stage-start`, closed by the matching `stage-end`. */
export interface StageRow {
  id: number;
  runId: string;
  cycle: number;
  stage: StageName;
  phase: Phase;
  attempt: number;
  /** Null while the attempt is still open (or was cut off by a crash). */
  outcome: StageAttemptOutcome | null;
  reason: string | null;
  startedAt: string;
  endedAt: string | null;
  /** The task of a tasks run the attempt belongs to; null in other runs. */
  task: string | null;
}

export interface ModelCallRow {
  id: number;
  runId: string;
  /** Position of the `model-call` event in the run's event stream. */
  seq: number;
  stage: StageName | null;
  provider: string;
  model: string;
  /** The full request as sent (redacted). */
  request: unknown;
  /** The full response, null when the call failed. */
  response: unknown;
  finishReason: FinishReason | null;
  inputTokens: number | null;
  outputTokens: number | null;
  /** USD; null when the call failed or the model has no known price. */
  costUsd: number | null;
  latencyMs: number;
  errorCode: string | null;
  error: string | null;
  createdAt: string;
}

export interface ToolCallRow {
  id: number;
  runId: string;
  seq: number;
  stage: StageName | null;
  tool: string;
  input: unknown;
  output: string;
  isError: boolean;
  durationMs: number;
  createdAt: string;
}

/** A failing test as stored in `verifications.failing_tests_json`. */
export interface FailingTest {
  id: string;
  kind: FailureKind | null;
  message: string | null;
}

/**
 * One test, lint or typecheck run. Test runs carry counts and failing tests (`ok` is null);
 * checks (lint, typecheck) carry `ok` (counts are null).
 */
export interface VerificationRow {
  id: number;
  runId: string;
  seq: number;
  stage: StageName;
  kind: VerificationKind;
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  passed: number | null;
  failed: number | null;
  skipped: number | null;
  total: number | null;
  ok: boolean | null;
  failingTests: FailingTest[];
  collectionErrors: string[];
  outputFile: string | null;
  createdAt: string;
  /**
   * The task of a tasks run whose stage ran it (its `verify-end` event's task); null in other
   * runs, and for the suite the coordinator runs after a merge.
   */
  task: string | null;
}

export interface CheckpointRow {
  id: number;
  runId: string;
  seq: number;
  stage: StageName;
  phase: Phase;
  commitSha: string;
  subject: string;
  createdAt: string;
}

/** Totals for one run, computed from the typed tables. */
export interface RunSummary {
  runId: string;
  status: RunStatus;
  /** Stage attempts by outcome; `open` counts attempts without a `stage-end`. */
  stageAttempts: {
    total: number;
    accepted: number;
    rejected: number;
    error: number;
    skipped: number;
    open: number;
  };
  modelCalls: {
    total: number;
    /** Calls that ended in an error (no response). */
    failed: number;
    /**
     * Sums of the tokens the servers reported. Null when calls were answered but none reported
     * them (unknown, not 0); when only some did, the sums of those (see `unreportedUsageCalls`).
     */
    inputTokens: number | null;
    outputTokens: number | null;
    /** Answered calls whose server did not report their token usage (input or output). */
    unreportedUsageCalls: number;
    /**
     * Sum of the known prices, in USD. Null when the cost is unknown: calls were answered and
     * none has a price (`unpricedCalls`: a model without a known price, or no token usage
     * reported). When only some have one it is the sum of those, a lower bound (`costPartial`).
     * Failed calls count as free; a run without calls costs 0.
     */
    costUsd: number | null;
    /** `costUsd` sums only some of the answered calls: `unpricedCalls` have no known cost. */
    costPartial: boolean;
    unpricedCalls: number;
  };
  toolCalls: { total: number; errors: number };
  /** `failing` counts runs that exited non-zero, timed out, or reported a failing test or check. */
  verifications: { total: number; failing: number };
  checkpoints: number;
  /** Stored events (`model-delta` is never stored). */
  events: number;
  startedAt: string;
  /** Null while the run has not finished. */
  finishedAt: string | null;
  /** From creation to finish; while unfinished, to the latest event or run update. */
  durationMs: number;
}

/** Progress of a solve run (seed 004's `orchestrator_runs`), as of its last `solve-progress` event. */
interface SolveRunRow {
  runId: string;
  mode: EventMap['solve-progress']['mode'];
  status: EventMap['solve-progress']['status'];
  totalParts: number;
  totalSteps: number;
  partsCompleted: number;
  stepsCompleted: number;
  stepsFailed: number;
  updatedAt: string;
}

/**
 * One pass of a solve run (seed 004's `orchestrator_passes` and `task_runs`). It spans the events
 * numbered `startSeq` to `endSeq`: the model calls, verifications and checkpoints recorded in that
 * range are its own (see `eventsOfPass`).
 */
export interface SolvePassRow {
  id: number;
  runId: string;
  pass: number;
  passType: SolvePassType;
  partId: string | null;
  stepId: string | null;
  attempt: number;
  /** Null while open (or cut off by a kill). */
  outcome: EventMap['solve-pass-end']['outcome'] | null;
  reason: string | null;
  context: SolveContextSummary | null;
  startSeq: number;
  /** Null while open: the pass then ends where the next one starts. */
  endSeq: number | null;
  startedAt: string;
  endedAt: string | null;
}

/** Tests after an implement attempt (seed 004's `validation_results`); full outputs are in `verifications`. */
interface SolveValidationRow {
  success: boolean;
  failingTests: string[];
  lintOk: boolean | null;
  typecheckOk: boolean | null;
}

/** One implement attempt (seed 004's `run_attempts`); its raw response is its pass's model call. */
interface SolveAttemptRow {
  id: number;
  runId: string;
  pass: number;
  partId: string | null;
  stepId: string;
  attempt: number;
  patchApplied: boolean;
  files: string[];
  error: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number;
  seq: number;
  createdAt: string;
  /** Null when no edit applied (nothing was tested). */
  validation: SolveValidationRow | null;
}

/** Everything the solve tables hold of one run, in order. */
export interface SolveTrace {
  progress: SolveRunRow | null;
  passes: SolvePassRow[];
  attempts: SolveAttemptRow[];
}

export interface RunFilter {
  /** One status, or any of several (e.g. `['running', 'interrupted']` for resumable runs). */
  status?: RunStatus | readonly RunStatus[];
  workflow?: string;
  /** Leaves out the runs of this workflow. */
  excludeWorkflow?: string;
}

export interface EventQuery {
  /** Only these event types. */
  types?: readonly EventType[];
}

export interface LedgerOptions {
  /**
   * Values to redact wherever they appear (see `secretsFromEnv`). Default: the keys and tokens
   * found in `process.env`, so a ledger opened without options never stores them either.
   */
  secrets?: readonly string[];
  /** Milliseconds SQLite waits for another connection's lock before failing (default 5000). */
  busyTimeoutMs?: number;
  /** Clock for `created_at` / `updated_at` of runs (default: system time). */
  now?: () => Date;
}

export interface Ledger extends AsyncDisposable {
  /** Path of the database file (`:memory:` for an in-memory ledger). */
  readonly file: string;
  /** The tasks of `tasks` runs, their stage attempts and model calls (see `task-types.ts`). */
  readonly tasks: TaskLedger;

  /** Inserts a run. Throws `internal` when the id already exists. */
  createRun(run: NewRun): Promise<RunRow>;
  /** Changes a run. Throws `not-found` when it does not exist. */
  updateRun(id: string, patch: RunPatch): Promise<RunRow>;
  getRun(id: string): Promise<RunRow | undefined>;
  /** The most recently created run matching the filter (all runs when none is given). */
  latestRun(filter?: RunFilter): Promise<RunRow | undefined>;
  /** Runs, newest first (default limit 20). */
  listRuns(limit?: number): Promise<RunRow[]>;

  /**
   * Persists one event (redacted) into `events` and into its typed table, in one transaction.
   * `model-delta` events are progress only and are not stored. Resolves once written.
   */
  record(event: RatchetEvent): Promise<void>;
  /** Persists events in order, in one transaction (cheaper than one `record` each). */
  recordMany(events: readonly RatchetEvent[]): Promise<void>;

  /** Stage attempts in the order they started. */
  stages(runId: string): Promise<StageRow[]>;
  modelCalls(runId: string): Promise<ModelCallRow[]>;
  toolCalls(runId: string): Promise<ToolCallRow[]>;
  verifications(runId: string): Promise<VerificationRow[]>;
  checkpoints(runId: string): Promise<CheckpointRow[]>;
  /** The solve workflow's passes, attempts and progress of a run (empty for other workflows). */
  solveTrace(runId: string): Promise<SolveTrace>;
  /**
   * The highest number `n` of the run's stored event ids (`<run-id>:<n>`), 0 without events: a
   * process that continues the run numbers its events from there. (Counting stored events would
   * not do: `model-delta` events take numbers but are never stored.)
   */
  lastEventNumber(runId: string): Promise<number>;
  /** Stored events of a run, in the order they were recorded. */
  events(runId: string, query?: EventQuery): Promise<RatchetEvent[]>;
  /** Totals for a run. Throws `not-found` when the run does not exist. */
  summary(runId: string): Promise<RunSummary>;

  /** Closes the database. Idempotent; later calls other than `close` throw. */
  close(): Promise<void>;
}
