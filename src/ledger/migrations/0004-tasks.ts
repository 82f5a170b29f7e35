import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * `0004_tasks`: the tasks workflow's tables (seed 000's `tasks`, `attempts` and `invocations`,
 * per run): `tasks`, `task_attempts` (each attempt of each stage of a task) and
 * `task_invocations` (each model call of a task).
 *
 * B4 (seed 000, "existing database with old CHECK constraint"): the seed created its `attempts`
 * table with `CHECK(stage IN (...))` through `CREATE TABLE IF NOT EXISTS`, so a database made
 * before `refactor` joined the list kept refusing REFACTOR attempts, and SQLite cannot alter a
 * constraint. Here the stage column has no CHECK (the types guard it, as in `0001_initial`), and
 * a `task_attempts` table that already exists (made from the seed's schema, or by a build before
 * this migration) is rebuilt into the shape below with its rows kept, whatever its CHECK said.
 * Released: never changes.
 */
export const tasksMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('tasks')
      .ifNotExists()
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      // Position in the tasks file: the order `tasks status` lists them in.
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('goal', 'text', (c) => c.notNull())
      .addColumn('acceptance_criteria_json', 'text', (c) => c.notNull())
      .addColumn('test_file', 'text', (c) => c.notNull())
      .addColumn('impl_file', 'text', (c) => c.notNull())
      .addColumn('depends_on_json', 'text', (c) => c.notNull())
      .addColumn('exports_json', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      // Attempts of the whole task started: a conflicting or red merge re-runs it as the next one.
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('branch', 'text')
      .addColumn('merge_commit', 'text')
      .addColumn('reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('tasks_pk', ['run_id', 'key'])
      .execute();

    const existing = await sql<{ name: string }>`
      select name from sqlite_master where type = 'table' and name = 'task_attempts'
    `.execute(db);
    if (existing.rows.length > 0) await sql`alter table task_attempts rename to task_attempts_before_0004`.execute(db);
    await db.schema
      .createTable('task_attempts')
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('task_key', 'text', (c) => c.notNull())
      .addColumn('task_attempt', 'integer', (c) => c.notNull().defaultTo(1))
      // No CHECK: B4 above.
      .addColumn('stage', 'text', (c) => c.notNull())
      .addColumn('attempt_number', 'integer', (c) => c.notNull())
      .addColumn('worker', 'text')
      .addColumn('prompt_hash', 'text')
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('completed_at', 'text')
      .addColumn('duration_ms', 'integer')
      .addColumn('success', 'integer')
      .addColumn('error_message', 'text')
      // A worker's rows can arrive twice (its job retried elsewhere, the stream replayed): one row each.
      .addUniqueConstraint('task_attempts_identity', ['run_id', 'task_key', 'task_attempt', 'stage', 'attempt_number'])
      .execute();
    if (existing.rows.length > 0) await copyRows(db, 'task_attempts_before_0004', 'task_attempts');

    await db.schema
      .createTable('task_invocations')
      .ifNotExists()
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('task_key', 'text', (c) => c.notNull())
      .addColumn('task_attempt', 'integer', (c) => c.notNull().defaultTo(1))
      // Which start of the task's job made the call (a job is started again when its worker dies).
      .addColumn('delivery', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('stage', 'text', (c) => c.notNull())
      .addColumn('worker', 'text')
      .addColumn('model', 'text')
      .addColumn('input_tokens', 'integer')
      .addColumn('output_tokens', 'integer')
      .addColumn('duration_ms', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('task_invocations_identity', ['run_id', 'task_key', 'task_attempt', 'delivery', 'seq'])
      .execute();
    await db.schema
      .createIndex('task_attempts_run_task')
      .ifNotExists()
      .on('task_attempts')
      .columns(['run_id', 'task_key', 'id'])
      .execute();
    await db.schema
      .createIndex('task_invocations_run_task')
      .ifNotExists()
      .on('task_invocations')
      .columns(['run_id', 'task_key', 'id'])
      .execute();
  },
};

/**
 * Copies the rows of `from` into `to` through the columns both have (a column only the new table
 * has takes its default; a row that repeats an earlier one's identity is dropped), then drops
 * `from` and its indexes.
 */
async function copyRows(db: Kysely<unknown>, from: string, to: string): Promise<void> {
  const columns = async (table: string): Promise<string[]> =>
    (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows.map((row) => row.name);
  const target = new Set(await columns(to));
  const shared = (await columns(from)).filter((name) => target.has(name));
  const list = sql.join(shared.map((name) => sql.ref(name)));
  await sql`insert or ignore into ${sql.table(to)} (${list}) select ${list} from ${sql.table(from)} order by rowid`.execute(
    db,
  );
  await sql`drop table ${sql.table(from)}`.execute(db);
}
