import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { RatchetError } from '../core/errors.js';
import { initialMigration } from './migrations/0001-initial.js';
import { finalCommitMigration } from './migrations/0002-final-commit.js';
import { modelMessagesMigration } from './migrations/0003-model-messages.js';
import { tasksMigration } from './migrations/0004-tasks.js';
import { solveTraceMigration } from './migrations/0005-solve-trace.js';
import { stageTaskMigration } from './migrations/0006-stage-task.js';
import type { LedgerDatabase } from './schema.js';

/**
 * Every migration of the ledger, by name. Kysely runs them in name order, so names start with a
 * zero-padded number. To add one: create `migrations/NNNN-what.ts` exporting a `Migration`
 * (typed against `Kysely<unknown>`, never against the current schema), add it here as
 * `'NNNN_what'`, and update `schema.ts`. Released migrations never change.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial': initialMigration,
  '0002_final_commit': finalCommitMigration,
  '0003_model_messages': modelMessagesMigration,
  '0004_tasks': tasksMigration,
  '0005_solve_trace': solveTraceMigration,
  '0006_stage_task': stageTaskMigration,
};

const provider: MigrationProvider = {
  getMigrations: () => Promise.resolve(MIGRATIONS),
};

/**
 * Brings the database up to the latest migration. Kysely runs SQLite migrations outside any
 * transaction, so the whole run is wrapped in `BEGIN IMMEDIATE` on the underlying connection:
 * it is atomic, and two processes opening a new ledger at once apply each migration once (the
 * second waits for the first's write lock, then finds nothing to do).
 */
export async function migrateToLatest(db: Kysely<LedgerDatabase>, sqlite: BetterSqlite3.Database): Promise<string[]> {
  // The migrations are independent of each other's order past 0003: a ledger that has a later
  // one (made by a build that had it first) still takes an earlier one it lacks.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  sqlite.exec('BEGIN IMMEDIATE');
  let committed = false;
  try {
    const { error, results } = await migrator.migrateToLatest();
    if (error !== undefined) {
      const failed = results?.find((result) => result.status === 'Error')?.migrationName;
      throw new RatchetError(
        'internal',
        failed === undefined
          ? `Could not migrate the run ledger: ${describe(error)}`
          : `Ledger migration ${failed} failed: ${describe(error)}`,
        {
          cause: error,
          hint: 'If this ledger was written by a newer Ratchet, upgrade Ratchet; otherwise move .ratchet/ledger.db aside and retry.',
        },
      );
    }
    sqlite.exec('COMMIT');
    committed = true;
    return (results ?? []).map((result) => result.migrationName);
  } finally {
    if (!committed && sqlite.inTransaction) sqlite.exec('ROLLBACK');
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
