import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * `0006_stage_task`: `stages.task`, the task of a tasks run an attempt belongs to (null in other
 * runs). Parallel tasks are at the same cycle, stage and attempt number at once: without it a
 * task's `stage-end` closed another task's open attempt, and the report could not say whose each
 * attempt was. Released: never changes.
 */
export const stageTaskMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('stages').addColumn('task', 'text').execute();
  },
};
