import type BetterSqlite3 from 'better-sqlite3';
import type { RatchetEvent } from '../../core/events.js';
import type { Redactor } from '../../core/redact.js';

/** The event types whose rows `SolveRows` writes. */
export const SOLVE_EVENT_TYPES = ['solve-pass-start', 'solve-pass-end', 'solve-attempt-end', 'solve-progress'] as const;

type SolveEvent = Extract<RatchetEvent, { type: (typeof SOLVE_EVENT_TYPES)[number] }>;

/**
 * The solve workflow's typed rows (migration 0005), written by `EventWriter` in the same
 * transaction as their event. Statements are prepared once per connection.
 */
export class SolveRows {
  readonly #redact: Redactor;
  readonly #passStart: BetterSqlite3.Statement;
  readonly #passEnd: BetterSqlite3.Statement;
  readonly #attempt: BetterSqlite3.Statement;
  readonly #validation: BetterSqlite3.Statement;
  readonly #progress: BetterSqlite3.Statement;

  constructor(sqlite: BetterSqlite3.Database, redact: Redactor) {
    this.#redact = redact;
    this.#passStart = sqlite.prepare(
      `insert into solve_passes (run_id, pass, pass_type, part_id, step_id, attempt, start_seq, started_at)
       values (@run_id, @pass, @pass_type, @part_id, @step_id, @attempt, @start_seq, @started_at)`,
    );
    // Closes the latest open row of the pass (a resumed run may have left one open before).
    this.#passEnd = sqlite.prepare(
      `update solve_passes set outcome = @outcome, reason = @reason, context_json = @context_json,
         prompt_tokens = @prompt_tokens, budget_tokens = @budget_tokens, end_seq = @end_seq, ended_at = @ended_at
       where id = (select id from solve_passes where run_id = @run_id and pass = @pass and end_seq is null
                   order by id desc limit 1)`,
    );
    this.#attempt = sqlite.prepare(
      `insert into solve_attempts (run_id, pass, part_id, step_id, attempt, patch_applied, files_json, error,
         prompt_tokens, completion_tokens, latency_ms, seq, created_at)
       values (@run_id, @pass, @part_id, @step_id, @attempt, @patch_applied, @files_json, @error,
         @prompt_tokens, @completion_tokens, @latency_ms, @seq, @created_at)`,
    );
    this.#validation = sqlite.prepare(
      `insert into solve_validations (attempt_id, run_id, success, failing_tests_json, lint_ok, typecheck_ok, seq)
       values (@attempt_id, @run_id, @success, @failing_tests_json, @lint_ok, @typecheck_ok, @seq)`,
    );
    this.#progress = sqlite.prepare(
      `insert into solve_runs (run_id, mode, status, total_parts, total_steps, parts_completed, steps_completed,
         steps_failed, seq, updated_at)
       values (@run_id, @mode, @status, @total_parts, @total_steps, @parts_completed, @steps_completed,
         @steps_failed, @seq, @updated_at)
       on conflict (run_id) do update set mode = excluded.mode, status = excluded.status,
         total_parts = excluded.total_parts, total_steps = excluded.total_steps,
         parts_completed = excluded.parts_completed, steps_completed = excluded.steps_completed,
         steps_failed = excluded.steps_failed, seq = excluded.seq, updated_at = excluded.updated_at`,
    );
  }

  /** Writes the row(s) of one solve event recorded as `seq`. */
  write(event: SolveEvent, seq: number): void {
    const run_id = event.runId;
    switch (event.type) {
      case 'solve-pass-start':
        this.#passStart.run({
          run_id,
          pass: event.pass,
          pass_type: event.passType,
          part_id: event.partId,
          step_id: event.stepId,
          attempt: event.attempt,
          start_seq: seq,
          started_at: event.timestamp,
        });
        return;
      case 'solve-pass-end':
        this.#passEnd.run({
          run_id,
          pass: event.pass,
          outcome: event.outcome,
          reason: event.reason === undefined ? null : this.#redact(event.reason),
          context_json: event.context === null ? null : JSON.stringify(event.context),
          prompt_tokens: event.context?.promptTokens ?? null,
          budget_tokens: event.context?.budgetTokens ?? null,
          end_seq: seq,
          ended_at: event.timestamp,
        });
        return;
      case 'solve-attempt-end': {
        const attempt = this.#attempt.run({
          run_id,
          pass: event.pass,
          part_id: event.partId,
          step_id: event.stepId,
          attempt: event.attempt,
          patch_applied: event.patchApplied ? 1 : 0,
          files_json: JSON.stringify(event.files),
          error: event.error === null ? null : this.#redact(event.error),
          prompt_tokens: event.promptTokens,
          completion_tokens: event.completionTokens,
          latency_ms: event.latencyMs,
          seq,
          created_at: event.timestamp,
        });
        const { validation } = event;
        if (validation === null) return;
        const flag = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);
        this.#validation.run({
          attempt_id: attempt.lastInsertRowid,
          run_id,
          success: validation.success ? 1 : 0,
          failing_tests_json: JSON.stringify(validation.failingTests.map((test) => this.#redact(test))),
          lint_ok: flag(validation.lintOk),
          typecheck_ok: flag(validation.typecheckOk),
          seq,
        });
        return;
      }
      case 'solve-progress':
        this.#progress.run({
          run_id,
          mode: event.mode,
          status: event.status,
          total_parts: event.totalParts,
          total_steps: event.totalSteps,
          parts_completed: event.partsCompleted,
          steps_completed: event.stepsCompleted,
          steps_failed: event.stepsFailed,
          seq,
          updated_at: event.timestamp,
        });
    }
  }
}
