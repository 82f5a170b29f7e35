import type { StagePhase, StageName } from './stages.js';
import type { HandoffState } from './handoff.js';
import type { ModelRequest, ModelResponse } from './model.js';
import type { CheckResult, TestRunResult } from './verification.js';
import type { TaskDefinition, TaskStatus } from './tasks.js';

/**
 * Engine events. Naming rule: `noun-verb` in kebab-case, the noun being what the event is about
 * (`stage-start`, `tool-call`, `verify-end`, `checkpoint-create`). Every event is wrapped in the
 * same envelope (`EventEnvelope`). Workflows emit `EventInput`s; the engine adds the envelope.
 */
export interface EventMap {
  'run-start': {
    workflow: string;
    feature: string;
    branch: string;
    worktree: string;
    baseCommit: string;
    resumed: boolean;
    /** A replayed run: the cassette, the commit this process starts from, and the entries played before it. */
    cassette?: { file: string; commit: string; position: number };
  };
  /**
   * How the model's commands run in this process of the run (its Bash, the tests, lint and
   * verifiers): in the bubblewrap sandbox, with its network setting and limits, or not at all
   * because the user opted out (`--no-sandbox`, or `[bash] sandbox = "off"`).
   */
  'sandbox-start': {
    mode: 'bubblewrap' | 'off';
    optOut?: 'flag' | 'config';
    network: 'off' | 'on';
    limits?: { processes: number; fileSizeMb: number; memoryMb: number; minFreeDiskMb: number };
  };
  /**
   * `partial`: the run stopped with part of its work done and kept (a tasks run where some tasks
   * merged and others failed or were blocked); resumable and acceptable as a failed run is.
   */
  'run-end': { status: 'completed' | 'partial' | 'failed' | 'interrupted'; message?: string };
  'cycle-start': { cycle: number; test: string | null };
  'stage-start': { stage: StageName; phase: StagePhase; attempt: number; cycle: number };
  'stage-end': {
    stage: StageName;
    phase: StagePhase;
    attempt: number;
    cycle: number;
    outcome: 'accepted' | 'rejected' | 'error' | 'skipped';
    reason?: string;
    /** A gate's rejection: the test ids or files it is about (the tests that no longer ran, say). */
    subjects?: string[];
  };
  'model-call': {
    stage: StageName | null;
    provider: string;
    model: string;
    request: ModelRequest;
    response: ModelResponse | null;
    error: { code: string; message: string } | null;
    latencyMs: number;
  };
  'model-retry': { provider: string; model: string; attempt: number; delayMs: number; reason: string };
  'model-delta': { text: string };
  'tool-call': {
    stage: StageName | null;
    tool: string;
    input: unknown;
    output: string;
    isError: boolean;
    durationMs: number;
  };
  'verify-end': {
    stage: StageName;
    /** `format`: a formatter command of a formatting-only refactor batch (seed 002, 17.3). */
    kind: 'test' | 'lint' | 'typecheck' | 'baseline' | 'format';
    result: TestRunResult | CheckResult;
    /** Stored copy of the full output, relative to the repository. */
    outputFile: string | null;
  };
  'checkpoint-create': {
    stage: StageName;
    phase: StagePhase;
    commit: string;
    subject: string;
    /** A replayed run: the cassette entries played when the checkpoint was made (where `resume` continues). */
    cassette?: { file: string; position: number };
  };
  'checkpoint-rollback': { stage: StageName; to: string; reason: string };
  'note-write': { commit: string; state: HandoffState };
  /**
   * Git lock files (`index.lock`, `<ref>.lock`) that a git killed mid-operation had left in the
   * run's worktree or on its own refs, removed (absolute paths) before the run was resumed,
   * rolled back or had its notes repaired (or, for the shared notes ref, started).
   */
  'git-lock-remove': { files: string[] };
  /** Refactor workflow (seed 002). */
  'backup-create': { bundle: string | null; snapshot: string; directory: string };
  /**
   * `ratchet refactor rollback`: `target` (the directory the run started from) was restored from
   * the run's backup in `backup`, after the state it replaced was backed up into `safetyBackup`;
   * `branch` is the branch put back at its commit of then (null when none was: not a git
   * repository, or a detached HEAD). `previousStatus` is the run's status before the rollback.
   */
  'backup-restore': {
    target: string;
    backup: string;
    safetyBackup: string;
    branch: string | null;
    previousStatus: string;
    /** Set when the run was undone by the rollback of an earlier run (`refactor rollback --force`). */
    undoneBy?: string;
  };
  'index-build': {
    files: number;
    parsed: number;
    reused: number;
    symbols: number;
    durationMs: number;
    artifacts: string;
  };
  'plan-create': { batches: number; source: 'heuristic' | 'planner'; goal: string | null };
  'batch-start': { batch: string; index: number; total: number; goal: string; attempt: number };
  'patch-check': {
    batch: string;
    attempt: number;
    admitted: boolean;
    files: string[];
    loc: number;
    violations: string[];
  };
  'batch-end': {
    batch: string;
    /** `rolled-back`: committed, then dropped when the full verifier failed after it. */
    outcome: 'committed' | 'noop' | 'blocked' | 'failed' | 'rolled-back';
    attempts: number;
    commit: string | null;
    reason?: string;
  };
  'contract-check': { batch: string; removed: string[]; changed: string[]; added: string[]; allowed: boolean };
  /** A refactor checkpoint passed the full verifier (the base commit passed it as the baseline). */
  'checkpoint-verify': { commit: string; level: 'full' };
  'plan-select': { cycle: number; test: string | null; testFile: string | null; implFile: string | null };
  /**
   * Solve workflow (seed 004). A pass is one model call answering with a plan or with edits,
   * with a context package of its own; `pass` numbers them 1, 2, ... per run. The ledger keeps
   * each pass with the range of events between its start and end, so the model calls, test runs
   * and checkpoints of a pass are the ones recorded inside that range.
   */
  'solve-pass-start': {
    pass: number;
    passType: SolvePassType;
    partId: string | null;
    stepId: string | null;
    /** 1 for a step's first implement attempt, 2 for its first retry, ...; 1 for other passes. */
    attempt: number;
  };
  'solve-pass-end': {
    pass: number;
    outcome: 'ok' | 'failed';
    reason?: string;
    /** What the pass's context package held; null when the pass failed before building one. */
    context: SolveContextSummary | null;
  };
  /** An implement attempt: its edits, whether they applied, and the tests after them (seed's run_attempts, validation_results). */
  'solve-attempt-end': {
    pass: number;
    partId: string | null;
    stepId: string;
    attempt: number;
    patchApplied: boolean;
    /** Files the edits changed or created. */
    files: string[];
    /** Why the edits were not applied (which edit, and why), or why the tests failed. */
    error: string | null;
    promptTokens: number | null;
    completionTokens: number | null;
    latencyMs: number;
    /** Null when no edit was applied (nothing to test). */
    validation: {
      success: boolean;
      failingTests: string[];
      lintOk: boolean | null;
      typecheckOk: boolean | null;
    } | null;
  };
  /** Progress of a solve run (seed's orchestrator_runs), after its plan and after every step. */
  'solve-progress': {
    mode: 'orchestrated' | 'single-pass';
    status: 'running' | 'complete' | 'partial' | 'failed';
    totalParts: number;
    totalSteps: number;
    partsCompleted: number;
    stepsCompleted: number;
    stepsFailed: number;
  };
  warning: { message: string; stage?: StageName };
  log: { message: string };
  /** A tasks run's tasks, as its tasks file defines them (recorded in the ledger's `tasks`). */
  'tasks-plan': { tasks: TaskDefinition[]; workers: number };
  /**
   * A task of a tasks run changed status (`core/tasks.ts`): started on a worker (in its own
   * worktree and branch), its pipeline finished or failed, merged, blocked or skipped.
   */
  'task-update': {
    task: string;
    status: TaskStatus;
    /** The attempt of the whole task (a re-run on a new base is the next). */
    attempt: number;
    branch?: string;
    mergeCommit?: string;
    reason?: string;
    /** Which worker runs it (`worker-2`, or a queue worker's `<host>:<pid>`), for progress. */
    worker?: string;
    /** A queue's start of the task's job (2 and more: the worker before died); absent in the local pool. */
    delivery?: number;
  };
}

export type EventType = keyof EventMap;

/** The kinds of solve passes (seed 004's `pass_type`). */
export type SolvePassType = 'meta_plan' | 'part_plan' | 'implement' | 'adjustment';

/** What one solve pass's context package held, for the ledger and the trace. */
export interface SolveContextSummary {
  /** The retrieval stages that ran (`scope`, `precision`). */
  stages: string[];
  /** Files the scope stage found. */
  candidates: number;
  /** Files given whole, most relevant first. */
  fullFiles: string[];
  /** Files given as signatures only. */
  signatureFiles: string[];
  /** Estimated tokens of the whole prompt (system and user), framing included. */
  promptTokens: number;
  /** What the prompt could take: the model's context window minus `[budget] reserved_tokens`. */
  budgetTokens: number;
}

export interface EventEnvelope {
  /** Monotonic per run: `<runId>:<seq>`. */
  id: string;
  runId: string;
  /** ISO 8601. */
  timestamp: string;
}

/**
 * `task`: the task of a tasks run an event belongs to (its stages, model and tool calls,
 * checkpoints), so progress and the ledger tell the tasks' interleaved events apart.
 */
export type EventInput = { [K in EventType]: { type: K; task?: string } & EventMap[K] }[EventType];
export type RatchetEvent = EventInput & EventEnvelope;
export type EventOf<K extends EventType> = { type: K; task?: string } & EventMap[K] & EventEnvelope;

/**
 * Whether the agent's work leaves its hands at `event` (a stage's end, a checkpoint): what it may
 * have left in the worktree (a shared dependency folder swapped) is put back there.
 */
export function handsOver(event: EventInput): boolean {
  return event.type === 'stage-end' || event.type === 'checkpoint-create';
}
