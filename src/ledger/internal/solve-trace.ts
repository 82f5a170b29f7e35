import type { Kysely } from 'kysely';
import type { SolveContextSummary } from '../../core/events.js';
import type { LedgerDatabase } from '../schema.js';
import type { SolveTrace } from '../types.js';

function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

const flag = (value: number | null): boolean | null => (value === null ? null : value === 1);

/** Reads a run's solve rows (migration 0005), passes and attempts in the order they were recorded. */
export async function readSolveTrace(db: Kysely<LedgerDatabase>, runId: string): Promise<SolveTrace> {
  const progress = await db.selectFrom('solve_runs').selectAll().where('run_id', '=', runId).executeTakeFirst();
  const passes = await db
    .selectFrom('solve_passes')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('start_seq')
    .orderBy('id')
    .execute();
  const attempts = await db
    .selectFrom('solve_attempts as a')
    .leftJoin('solve_validations as v', 'v.attempt_id', 'a.id')
    .selectAll('a')
    .select(['v.success', 'v.failing_tests_json', 'v.lint_ok', 'v.typecheck_ok', 'v.id as validation_id'])
    .where('a.run_id', '=', runId)
    .orderBy('a.seq')
    .execute();
  return {
    progress:
      progress === undefined
        ? null
        : {
            runId: progress.run_id,
            mode: progress.mode,
            status: progress.status,
            totalParts: progress.total_parts,
            totalSteps: progress.total_steps,
            partsCompleted: progress.parts_completed,
            stepsCompleted: progress.steps_completed,
            stepsFailed: progress.steps_failed,
            updatedAt: progress.updated_at,
          },
    passes: passes.map((row) => ({
      id: row.id,
      runId: row.run_id,
      pass: row.pass,
      passType: row.pass_type,
      partId: row.part_id,
      stepId: row.step_id,
      attempt: row.attempt,
      outcome: row.outcome,
      reason: row.reason,
      context: parseJson<SolveContextSummary | null>(row.context_json, null),
      startSeq: row.start_seq,
      endSeq: row.end_seq,
      startedAt: row.started_at,
      endedAt: row.ended_at,
    })),
    attempts: attempts.map((row) => ({
      id: row.id,
      runId: row.run_id,
      pass: row.pass,
      partId: row.part_id,
      stepId: row.step_id,
      attempt: row.attempt,
      patchApplied: row.patch_applied === 1,
      files: parseJson<string[]>(row.files_json, []),
      error: row.error,
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      latencyMs: row.latency_ms,
      seq: row.seq,
      createdAt: row.created_at,
      validation:
        row.validation_id === null
          ? null
          : {
              success: row.success === 1,
              failingTests: parseJson<string[]>(row.failing_tests_json, []),
              lintOk: flag(row.lint_ok),
              typecheckOk: flag(row.typecheck_ok),
            },
    })),
  };
}
