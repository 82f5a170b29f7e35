import type { Selectable } from 'kysely';
import type {
  EventsTable,
  CheckpointsTable,
  ModelCallsTable,
  RunsTable,
  StagesTable,
  ToolCallsTable,
  VerificationsTable,
} from '../schema.js';
import type { RatchetEvent } from '../../core/events.js';
import { storedRequest } from './model-messages.js';
import type {
  CheckpointRow,
  FailingTest,
  ModelCallRow,
  RunRow,
  StageRow,
  ToolCallRow,
  VerificationRow,
} from '../types.js';

/** Parses JSON the ledger wrote itself (so its shape is known). */
function parseJson(text: string | null): unknown {
  if (text === null) return null;
  const value: unknown = JSON.parse(text);
  return value;
}

export function toRunRow(row: Selectable<RunsTable>): RunRow {
  return {
    id: row.id,
    workflow: row.workflow,
    repoRoot: row.repo_root,
    feature: row.feature,
    status: row.status,
    branch: row.branch,
    baseBranch: row.base_branch,
    baseCommit: row.base_commit,
    worktree: row.worktree,
    provider: row.provider,
    model: row.model,
    config: parseJson(row.config_json),
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    finalCommit: row.final_commit,
  };
}

export function toStageRow(row: Selectable<StagesTable>): StageRow {
  return {
    id: row.id,
    runId: row.run_id,
    cycle: row.cycle,
    stage: row.stage,
    phase: row.phase,
    attempt: row.attempt,
    outcome: row.outcome,
    reason: row.reason,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    task: row.task,
  };
}

/** A `model_calls` row; `messages` holds the stored messages its `message_hashes_json` names (see `loadMessages`). */
export function toModelCallRow(row: Selectable<ModelCallsTable>, messages: ReadonlyMap<string, unknown>): ModelCallRow {
  return {
    id: row.id,
    runId: row.run_id,
    seq: row.seq,
    stage: row.stage,
    provider: row.provider,
    model: row.model,
    request: storedRequest(row.request_json, row.message_hashes_json, messages),
    response: parseJson(row.response_json),
    finishReason: row.finish_reason,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    costUsd: row.cost_usd,
    latencyMs: row.latency_ms,
    errorCode: row.error_code,
    error: row.error,
    createdAt: row.created_at,
  };
}

export function toToolCallRow(row: Selectable<ToolCallsTable>): ToolCallRow {
  return {
    id: row.id,
    runId: row.run_id,
    seq: row.seq,
    stage: row.stage,
    tool: row.tool,
    input: parseJson(row.input_json),
    output: row.output,
    isError: row.is_error !== 0,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
  };
}

export function toVerificationRow(row: Selectable<VerificationsTable> & { task: string | null }): VerificationRow {
  return {
    id: row.id,
    runId: row.run_id,
    seq: row.seq,
    stage: row.stage,
    kind: row.kind,
    command: row.command,
    exitCode: row.exit_code,
    timedOut: row.timed_out !== 0,
    durationMs: row.duration_ms,
    passed: row.passed,
    failed: row.failed,
    skipped: row.skipped,
    total: row.total,
    ok: row.ok === null ? null : row.ok !== 0,
    failingTests: parseJson(row.failing_tests_json) as FailingTest[],
    collectionErrors: parseJson(row.collection_errors_json) as string[],
    outputFile: row.output_file,
    createdAt: row.created_at,
    task: row.task,
  };
}

export function toCheckpointRow(row: Selectable<CheckpointsTable>): CheckpointRow {
  return {
    id: row.id,
    runId: row.run_id,
    seq: row.seq,
    stage: row.stage,
    phase: row.phase,
    commitSha: row.commit_sha,
    subject: row.subject,
    createdAt: row.created_at,
  };
}

/** An `events` row with the split-off fields of `model-call` / `tool-call` joined back. */
export interface JoinedEventRow extends Selectable<EventsTable> {
  request_json: string | null;
  message_hashes_json: string | null;
  response_json: string | null;
  input_json: string | null;
  output: string | null;
}

/** Rebuilds the event as it was recorded (after redaction); `messages` as for `toModelCallRow`. */
export function toEvent(row: JoinedEventRow, messages: ReadonlyMap<string, unknown>): RatchetEvent {
  const payload = parseJson(row.payload_json) as Record<string, unknown>;
  if (row.type === 'model-call') {
    payload.request = storedRequest(row.request_json, row.message_hashes_json, messages);
    payload.response = parseJson(row.response_json);
  } else if (row.type === 'tool-call') {
    payload.input = parseJson(row.input_json);
    payload.output = row.output ?? '';
  }
  return {
    type: row.type,
    ...payload,
    id: row.id,
    runId: row.run_id,
    timestamp: row.timestamp,
  } as RatchetEvent;
}
