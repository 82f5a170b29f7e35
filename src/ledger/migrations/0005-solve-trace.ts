import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * `0005_solve_trace`: the traceability tables of the solve workflow (seed 004's
 * `orchestrator_runs`, `orchestrator_passes` + `task_runs`, `run_attempts`,
 * `validation_results`), derived from its events like the other typed tables. A pass keeps the
 * range of event numbers it spans (`start_seq` .. `end_seq`): the model calls (`model_calls`),
 * test runs (`verifications`) and checkpoints recorded inside that range are the pass's, which
 * links every pass to the full prompt and response of each of its calls. Released: never changes.
 *
 * It depends on no table of another migration but `runs` (by value, not by foreign key), so it
 * runs whether or not `0004_tasks` has (the tasks workflow's, on its own branch).
 */
export const solveTraceMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('solve_runs')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('total_parts', 'integer', (c) => c.notNull())
      .addColumn('total_steps', 'integer', (c) => c.notNull())
      .addColumn('parts_completed', 'integer', (c) => c.notNull())
      .addColumn('steps_completed', 'integer', (c) => c.notNull())
      .addColumn('steps_failed', 'integer', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('solve_passes')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('pass', 'integer', (c) => c.notNull())
      .addColumn('pass_type', 'text', (c) => c.notNull())
      .addColumn('part_id', 'text')
      .addColumn('step_id', 'text')
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('outcome', 'text')
      .addColumn('reason', 'text')
      .addColumn('context_json', 'text')
      .addColumn('prompt_tokens', 'integer')
      .addColumn('budget_tokens', 'integer')
      .addColumn('start_seq', 'integer', (c) => c.notNull())
      .addColumn('end_seq', 'integer')
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('ended_at', 'text')
      .execute();
    await db.schema.createIndex('solve_passes_run_pass').on('solve_passes').columns(['run_id', 'pass']).execute();

    await db.schema
      .createTable('solve_attempts')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('pass', 'integer', (c) => c.notNull())
      .addColumn('part_id', 'text')
      .addColumn('step_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('patch_applied', 'integer', (c) => c.notNull())
      .addColumn('files_json', 'text', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('prompt_tokens', 'integer')
      .addColumn('completion_tokens', 'integer')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('solve_attempts_run_pass').on('solve_attempts').columns(['run_id', 'pass']).execute();

    await db.schema
      .createTable('solve_validations')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('attempt_id', 'integer', (c) => c.notNull().references('solve_attempts.id').onDelete('cascade'))
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('success', 'integer', (c) => c.notNull())
      .addColumn('failing_tests_json', 'text', (c) => c.notNull())
      .addColumn('lint_ok', 'integer')
      .addColumn('typecheck_ok', 'integer')
      .addColumn('seq', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('solve_validations_attempt').on('solve_validations').columns(['attempt_id']).execute();
  },
};
