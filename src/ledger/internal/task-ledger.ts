import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Selectable, UpdateObject } from 'kysely';
import { RatchetError } from '../../core/errors.js';
import type { Redactor } from '../../core/redact.js';
import type { LedgerDatabase, TaskAttemptsTable, TaskInvocationsTable, TasksTable } from '../schema.js';
import type {
  NewTask,
  TaskAttemptRecord,
  TaskAttemptRow,
  TaskInvocationRecord,
  TaskInvocationRow,
  TaskLedger,
  TaskPatch,
  TaskRow,
} from '../task-types.js';

/** JSON arrays of strings the ledger wrote itself. */
function strings(text: string): string[] {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.map(String) : [];
}

function toTaskRow(row: Selectable<TasksTable>): TaskRow {
  return {
    runId: row.run_id,
    key: row.key,
    position: row.position,
    title: row.title,
    goal: row.goal,
    acceptanceCriteria: strings(row.acceptance_criteria_json),
    testFile: row.test_file,
    implFile: row.impl_file,
    dependsOn: strings(row.depends_on_json),
    exports: strings(row.exports_json),
    status: row.status,
    attempts: row.attempts,
    branch: row.branch,
    mergeCommit: row.merge_commit,
    reason: row.reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toAttemptRow(row: Selectable<TaskAttemptsTable>): TaskAttemptRow {
  return {
    id: row.id,
    runId: row.run_id,
    taskKey: row.task_key,
    taskAttempt: row.task_attempt,
    stage: row.stage,
    attemptNumber: row.attempt_number,
    worker: row.worker,
    promptHash: row.prompt_hash,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    durationMs: row.duration_ms,
    success: row.success === null ? null : row.success === 1,
    errorMessage: row.error_message,
  };
}

function toInvocationRow(row: Selectable<TaskInvocationsTable>): TaskInvocationRow {
  return {
    id: row.id,
    runId: row.run_id,
    taskKey: row.task_key,
    taskAttempt: row.task_attempt,
    delivery: row.delivery,
    seq: row.seq,
    stage: row.stage,
    worker: row.worker,
    model: row.model,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
  };
}

/**
 * `Ledger.tasks` over the ledger's own connection. Text a model or a user wrote (titles, goals,
 * criteria, reasons, error messages) goes through the ledger's redactor like every other row.
 */
export class SqliteTaskLedger implements TaskLedger {
  readonly #db: Kysely<LedgerDatabase>;
  readonly #sqlite: BetterSqlite3.Database;
  readonly #redact: Redactor;
  readonly #now: () => Date;
  readonly #assertOpen: () => void;
  /**
   * The writes a tasks run makes for every stage and every model call, prepared once (through
   * Kysely each is built, compiled and prepared again: a pool records hundreds).
   */
  #insertAttempt: BetterSqlite3.Statement<[Omit<Selectable<TaskAttemptsTable>, 'id'>]> | undefined;
  #insertInvocation: BetterSqlite3.Statement<[Omit<Selectable<TaskInvocationsTable>, 'id'>]> | undefined;

  constructor(
    db: Kysely<LedgerDatabase>,
    sqlite: BetterSqlite3.Database,
    redact: Redactor,
    now: () => Date,
    assertOpen: () => void,
  ) {
    this.#db = db;
    this.#sqlite = sqlite;
    this.#redact = redact;
    this.#now = now;
    this.#assertOpen = assertOpen;
  }

  async addTasks(runId: string, tasks: readonly NewTask[]): Promise<void> {
    this.#assertOpen();
    if (tasks.length === 0) return;
    const now = this.#now().toISOString();
    const redactAll = (texts: readonly string[]): string => JSON.stringify(texts.map((text) => this.#redact(text)));
    await this.#db
      .insertInto('tasks')
      .values(
        tasks.map((task, position) => ({
          run_id: runId,
          key: task.key,
          position,
          title: this.#redact(task.title),
          goal: this.#redact(task.goal),
          acceptance_criteria_json: redactAll(task.acceptanceCriteria),
          test_file: task.testFile,
          impl_file: task.implFile,
          depends_on_json: JSON.stringify(task.dependsOn),
          exports_json: JSON.stringify(task.exports),
          status: 'pending' as const,
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((conflict) => conflict.columns(['run_id', 'key']).doNothing())
      .execute();
  }

  async updateTask(runId: string, key: string, patch: TaskPatch): Promise<TaskRow> {
    this.#assertOpen();
    const update: UpdateObject<LedgerDatabase, 'tasks'> = { updated_at: this.#now().toISOString() };
    if (patch.status !== undefined) update.status = patch.status;
    if (patch.attempts !== undefined) update.attempts = patch.attempts;
    if (patch.branch !== undefined) update.branch = patch.branch;
    if (patch.mergeCommit !== undefined) update.merge_commit = patch.mergeCommit;
    if (patch.reason !== undefined) update.reason = patch.reason === null ? null : this.#redact(patch.reason);
    const result = await this.#db
      .updateTable('tasks')
      .set(update)
      .where('run_id', '=', runId)
      .where('key', '=', key)
      .executeTakeFirst();
    const row = result.numUpdatedRows === 0n ? undefined : await this.getTask(runId, key);
    if (row === undefined)
      throw new RatchetError('not-found', `Run ${runId} has no task "${key}"`, {
        hint: `Run \`ratchet tasks status ${runId}\` to list its tasks.`,
      });
    return row;
  }

  async tasks(runId: string): Promise<TaskRow[]> {
    this.#assertOpen();
    const rows = await this.#db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('position')
      .execute();
    return rows.map(toTaskRow);
  }

  async getTask(runId: string, key: string): Promise<TaskRow | undefined> {
    this.#assertOpen();
    const row = await this.#db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .where('key', '=', key)
      .executeTakeFirst();
    return row === undefined ? undefined : toTaskRow(row);
  }

  recordAttempt(attempt: TaskAttemptRecord): Promise<void> {
    // Synchronous, as better-sqlite3 is; a failure rejects (the executor's throw).
    return new Promise((resolve) => {
      this.#writeAttempt(attempt);
      resolve();
    });
  }

  #writeAttempt(attempt: TaskAttemptRecord): void {
    this.#assertOpen();
    const success = attempt.success === undefined || attempt.success === null ? null : attempt.success ? 1 : 0;
    const errorMessage =
      attempt.errorMessage === undefined || attempt.errorMessage === null ? null : this.#redact(attempt.errorMessage);
    this.#insertAttempt ??= this.#sqlite.prepare(
      `insert into task_attempts (run_id, task_key, task_attempt, stage, attempt_number, worker, prompt_hash,
         started_at, completed_at, duration_ms, success, error_message)
       values (@run_id, @task_key, @task_attempt, @stage, @attempt_number, @worker, @prompt_hash,
         @started_at, @completed_at, @duration_ms, @success, @error_message)
       on conflict (run_id, task_key, task_attempt, stage, attempt_number) do update set
         -- What a repeat knows fills in what the row lacks; what the row knows stays, so an end
         -- that arrived first is never undone by its start arriving after it.
         worker = coalesce(task_attempts.worker, excluded.worker),
         prompt_hash = coalesce(task_attempts.prompt_hash, excluded.prompt_hash),
         completed_at = coalesce(task_attempts.completed_at, excluded.completed_at),
         duration_ms = coalesce(task_attempts.duration_ms, excluded.duration_ms),
         success = coalesce(task_attempts.success, excluded.success),
         error_message = coalesce(task_attempts.error_message, excluded.error_message)`,
    );
    this.#insertAttempt.run({
      run_id: attempt.runId,
      task_key: attempt.taskKey,
      task_attempt: attempt.taskAttempt ?? 1,
      stage: attempt.stage,
      attempt_number: attempt.attemptNumber,
      worker: attempt.worker ?? null,
      prompt_hash: attempt.promptHash ?? null,
      started_at: attempt.startedAt,
      completed_at: attempt.completedAt ?? null,
      duration_ms: attempt.durationMs ?? null,
      success,
      error_message: errorMessage,
    });
  }

  async attempts(runId: string, taskKey?: string): Promise<TaskAttemptRow[]> {
    this.#assertOpen();
    let query = this.#db.selectFrom('task_attempts').selectAll().where('run_id', '=', runId);
    if (taskKey !== undefined) query = query.where('task_key', '=', taskKey);
    return (await query.orderBy('id').execute()).map(toAttemptRow);
  }

  recordInvocation(invocation: TaskInvocationRecord): Promise<void> {
    return new Promise((resolve) => {
      this.#writeInvocation(invocation);
      resolve();
    });
  }

  #writeInvocation(invocation: TaskInvocationRecord): void {
    this.#assertOpen();
    this.#insertInvocation ??= this.#sqlite.prepare(
      `insert into task_invocations (run_id, task_key, task_attempt, delivery, seq, stage, worker, model,
         input_tokens, output_tokens, duration_ms, created_at)
       values (@run_id, @task_key, @task_attempt, @delivery, @seq, @stage, @worker, @model,
         @input_tokens, @output_tokens, @duration_ms, @created_at)
       on conflict (run_id, task_key, task_attempt, delivery, seq) do nothing`,
    );
    this.#insertInvocation.run({
      run_id: invocation.runId,
      task_key: invocation.taskKey,
      task_attempt: invocation.taskAttempt ?? 1,
      delivery: invocation.delivery ?? 1,
      seq: invocation.seq,
      stage: invocation.stage,
      worker: invocation.worker ?? null,
      model: invocation.model ?? null,
      input_tokens: invocation.inputTokens ?? null,
      output_tokens: invocation.outputTokens ?? null,
      duration_ms: invocation.durationMs ?? null,
      created_at: invocation.createdAt,
    });
  }

  async invocations(runId: string, taskKey?: string): Promise<TaskInvocationRow[]> {
    this.#assertOpen();
    let query = this.#db.selectFrom('task_invocations').selectAll().where('run_id', '=', runId);
    if (taskKey !== undefined) query = query.where('task_key', '=', taskKey);
    return (await query.orderBy('id').execute()).map(toInvocationRow);
  }
}
