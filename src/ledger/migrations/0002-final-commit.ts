import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * `0002_final_commit`: `runs.final_commit`, the last commit of a run's branch when the run was
 * accepted or rejected. Accepting and rejecting delete the branch, and `status`, `history` and
 * `report` still read the run's checkpoints back from there.
 */
export const finalCommitMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('runs').addColumn('final_commit', 'text').execute();
  },
};
