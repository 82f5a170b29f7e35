import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * `0001_initial`: runs, stage attempts, model calls, tool calls, verifications, checkpoints and
 * events. Frozen once released: later changes go in a new migration.
 */
export const initialMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workflow', 'text', (c) => c.notNull())
      .addColumn('repo_root', 'text', (c) => c.notNull())
      .addColumn('feature', 'text', (c) => c.notNull())
      // No CHECK on enum-like columns: the types guard them, and adding a value later must not
      // need a table rebuild (SQLite cannot alter a constraint).
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('branch', 'text')
      .addColumn('base_branch', 'text')
      .addColumn('base_commit', 'text')
      .addColumn('worktree', 'text')
      .addColumn('provider', 'text')
      .addColumn('model', 'text')
      .addColumn('config_json', 'text')
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    await db.schema.createIndex('runs_created_at').on('runs').columns(['created_at']).execute();
    await db.schema.createIndex('runs_status_created_at').on('runs').columns(['status', 'created_at']).execute();

    await db.schema
      .createTable('stages')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('cycle', 'integer', (c) => c.notNull())
      .addColumn('stage', 'text', (c) => c.notNull())
      .addColumn('phase', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('outcome', 'text')
      .addColumn('reason', 'text')
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('ended_at', 'text')
      .execute();
    await db.schema
      .createIndex('stages_run_id')
      .on('stages')
      .columns(['run_id', 'cycle', 'stage', 'attempt'])
      .execute();

    await db.schema
      .createTable('model_calls')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('stage', 'text')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('request_json', 'text', (c) => c.notNull())
      .addColumn('response_json', 'text')
      .addColumn('finish_reason', 'text')
      .addColumn('input_tokens', 'integer')
      .addColumn('output_tokens', 'integer')
      .addColumn('cost_usd', 'real')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('error_code', 'text')
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('model_calls_run_id').on('model_calls').columns(['run_id', 'seq']).execute();

    await db.schema
      .createTable('tool_calls')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('stage', 'text')
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('input_json', 'text', (c) => c.notNull())
      .addColumn('output', 'text', (c) => c.notNull())
      .addColumn('is_error', 'integer', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('tool_calls_run_id').on('tool_calls').columns(['run_id', 'seq']).execute();

    await db.schema
      .createTable('verifications')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('stage', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('command', 'text', (c) => c.notNull())
      .addColumn('exit_code', 'integer')
      .addColumn('timed_out', 'integer', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('passed', 'integer')
      .addColumn('failed', 'integer')
      .addColumn('skipped', 'integer')
      .addColumn('total', 'integer')
      .addColumn('ok', 'integer')
      .addColumn('failing_tests_json', 'text', (c) => c.notNull())
      .addColumn('collection_errors_json', 'text', (c) => c.notNull())
      .addColumn('output_file', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('verifications_run_id').on('verifications').columns(['run_id', 'seq']).execute();

    await db.schema
      .createTable('checkpoints')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('stage', 'text', (c) => c.notNull())
      .addColumn('phase', 'text', (c) => c.notNull())
      .addColumn('commit_sha', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('checkpoints_run_id').on('checkpoints').columns(['run_id', 'seq']).execute();

    // (run_id, seq) is the key: it orders a run's events and joins them to the typed tables.
    await db.schema
      .createTable('events')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('timestamp', 'text', (c) => c.notNull())
      .addColumn('payload_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('events_pk', ['run_id', 'seq'])
      .execute();
    await db.schema.createIndex('events_run_id_type').on('events').columns(['run_id', 'type', 'seq']).execute();
  },
};
