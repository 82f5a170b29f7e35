import type { Generated } from 'kysely';
import type { EventMap, EventType, SolvePassType } from '../core/events.js';
import type { FinishReason } from '../core/model.js';
import type { StagePhase as Phase, StageName } from '../core/stages.js';
import type { TaskStage, TaskStatus } from '../core/tasks.js';
import type { RunStatus, StageAttemptOutcome, VerificationKind } from './types.js';

/**
 * The ledger's tables as Kysely sees them (snake_case, as stored). Booleans are 0/1 integers,
 * JSON columns are text, timestamps are ISO 8601 text. Keep this in step with the migrations in
 * `migrations/`: it describes the schema after the latest one.
 */
export interface LedgerDatabase {
  runs: RunsTable;
  stages: StagesTable;
  model_calls: ModelCallsTable;
  model_messages: ModelMessagesTable;
  tool_calls: ToolCallsTable;
  verifications: VerificationsTable;
  checkpoints: CheckpointsTable;
  events: EventsTable;
  solve_runs: SolveRunsTable;
  solve_passes: SolvePassesTable;
  solve_attempts: SolveAttemptsTable;
  solve_validations: SolveValidationsTable;
  tasks: TasksTable;
  task_attempts: TaskAttemptsTable;
  task_invocations: TaskInvocationsTable;
}

export interface RunsTable {
  id: string;
  workflow: string;
  repo_root: string;
  feature: string;
  status: RunStatus;
  branch: string | null;
  base_branch: string | null;
  base_commit: string | null;
  worktree: string | null;
  provider: string | null;
  model: string | null;
  config_json: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  final_commit: string | null;
}

export interface StagesTable {
  id: Generated<number>;
  run_id: string;
  cycle: number;
  stage: StageName;
  phase: Phase;
  attempt: number;
  outcome: StageAttemptOutcome | null;
  reason: string | null;
  started_at: string;
  ended_at: string | null;
  /** The task of a tasks run (`0006_stage_task`); null in other runs. */
  task: string | null;
}

/** Rows derived from an event carry the event's `seq` (join key with `events`). */
export interface ModelCallsTable {
  id: Generated<number>;
  run_id: string;
  seq: number;
  stage: StageName | null;
  provider: string;
  model: string;
  /** The request as sent (redacted); with `messages: null` when `message_hashes_json` is set. */
  request_json: string;
  /** The sha256 of each message of the request, in order (see `model_messages`); null in calls recorded before 0003. */
  message_hashes_json: string | null;
  response_json: string | null;
  finish_reason: FinishReason | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  latency_ms: number;
  error_code: string | null;
  error: string | null;
  created_at: string;
}

/**
 * Each message of a model conversation, once (content-addressed): a conversation's calls repeat
 * every earlier message, and refer to them here by hash instead of storing them again.
 */
interface ModelMessagesTable {
  /** sha256 (hex) of `message_json`. */
  hash: string;
  /** The message as sent (redacted), JSON. */
  message_json: string;
}

export interface ToolCallsTable {
  id: Generated<number>;
  run_id: string;
  seq: number;
  stage: StageName | null;
  tool: string;
  input_json: string;
  output: string;
  is_error: number;
  duration_ms: number;
  created_at: string;
}

export interface VerificationsTable {
  id: Generated<number>;
  run_id: string;
  seq: number;
  stage: StageName;
  kind: VerificationKind;
  command: string;
  exit_code: number | null;
  timed_out: number;
  duration_ms: number;
  passed: number | null;
  failed: number | null;
  skipped: number | null;
  total: number | null;
  ok: number | null;
  failing_tests_json: string;
  collection_errors_json: string;
  output_file: string | null;
  created_at: string;
}

export interface CheckpointsTable {
  id: Generated<number>;
  run_id: string;
  seq: number;
  stage: StageName;
  phase: Phase;
  commit_sha: string;
  subject: string;
  created_at: string;
}

/**
 * Every stored event. `seq` is assigned by the ledger: 1, 2, 3... per run in the order events
 * were recorded (the envelope `id` is kept as given). `payload_json` holds the event without
 * its envelope and type; for `model-call` it also leaves out `request` and `response`, and for
 * `tool-call` `input` and `output`, which live once in `model_calls` / `tool_calls` (same run
 * and seq) and are joined back by `Ledger.events`.
 */
export interface EventsTable {
  run_id: string;
  seq: number;
  id: string;
  type: EventType;
  timestamp: string;
  payload_json: string;
}

/** Solve workflow (0005): one row per run, updated by each `solve-progress` event. */
interface SolveRunsTable {
  run_id: string;
  mode: EventMap['solve-progress']['mode'];
  status: EventMap['solve-progress']['status'];
  total_parts: number;
  total_steps: number;
  parts_completed: number;
  steps_completed: number;
  steps_failed: number;
  /** The last `solve-progress` event. */
  seq: number;
  updated_at: string;
}

/** One pass: opened by `solve-pass-start`, closed by `solve-pass-end`; it spans seqs start_seq..end_seq. */
interface SolvePassesTable {
  id: Generated<number>;
  run_id: string;
  pass: number;
  pass_type: SolvePassType;
  part_id: string | null;
  step_id: string | null;
  attempt: number;
  outcome: EventMap['solve-pass-end']['outcome'] | null;
  reason: string | null;
  /** `SolveContextSummary` as JSON. */
  context_json: string | null;
  prompt_tokens: number | null;
  budget_tokens: number | null;
  start_seq: number;
  end_seq: number | null;
  started_at: string;
  ended_at: string | null;
}

interface SolveAttemptsTable {
  id: Generated<number>;
  run_id: string;
  pass: number;
  part_id: string | null;
  step_id: string;
  attempt: number;
  patch_applied: number;
  files_json: string;
  error: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  latency_ms: number;
  seq: number;
  created_at: string;
}

interface SolveValidationsTable {
  id: Generated<number>;
  attempt_id: number;
  run_id: string;
  success: number;
  failing_tests_json: string;
  lint_ok: number | null;
  typecheck_ok: number | null;
  seq: number;
}
/** The tasks of a `tasks` run (`0004_tasks`), one row per task of its tasks file. */
export interface TasksTable {
  run_id: string;
  key: string;
  position: number;
  title: string;
  goal: string;
  acceptance_criteria_json: string;
  test_file: string;
  impl_file: string;
  depends_on_json: string;
  exports_json: string;
  status: TaskStatus;
  attempts: Generated<number>;
  branch: string | null;
  merge_commit: string | null;
  reason: string | null;
  created_at: string;
  updated_at: string;
}

/** Each attempt of each stage of a task; `success` null while it is open. */
export interface TaskAttemptsTable {
  id: Generated<number>;
  run_id: string;
  task_key: string;
  task_attempt: Generated<number>;
  stage: TaskStage;
  attempt_number: number;
  worker: string | null;
  prompt_hash: string | null;
  started_at: string;
  completed_at: string | null;
  duration_ms: number | null;
  success: number | null;
  error_message: string | null;
}

/** Each model call of a task, as its worker reported it. */
export interface TaskInvocationsTable {
  id: Generated<number>;
  run_id: string;
  task_key: string;
  task_attempt: Generated<number>;
  delivery: Generated<number>;
  seq: number;
  stage: string;
  worker: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  duration_ms: number | null;
  created_at: string;
}
