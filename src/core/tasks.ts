import type { StageName } from './stages.js';

/**
 * The tasks workflow's domain types (seed 000: a specification decomposed into tasks, each run
 * through the stage pipeline by a pool of workers), shared by the ledger that stores tasks and the
 * workflow that schedules them.
 */

/** A task as a tasks file defines it (validated in `workflows/tasks/tasks-file.ts`). */
export interface TaskDefinition {
  key: string;
  title: string;
  goal: string;
  acceptanceCriteria: string[];
  testFile: string;
  implFile: string;
  dependsOn: string[];
  exports: string[];
}

/**
 * Where a task of a run stands:
 * - `pending`: waiting for its dependencies to merge, or for a free worker;
 * - `running`: a worker runs its pipeline (a re-run after a conflicting merge too);
 * - `done`: its pipeline passed, its branch waits to be merged;
 * - `merged`: merged into the run branch, and the full suite passed after the merge;
 * - `failed`: its pipeline failed (it says why);
 * - `blocked`: it cannot go on: a dependency failed or is blocked, or its merge kept conflicting
 *   or turning the suite red after the re-runs allowed;
 * - `skipped`: the user skipped it (`ratchet tasks skip`): its dependents run as if it had merged.
 */
export type TaskStatus = 'pending' | 'running' | 'done' | 'merged' | 'failed' | 'blocked' | 'skipped';

/**
 * A task's stage as its attempts are stored: the seed's lowercase names (`attempts.stage`),
 * with `refactor` (seed 000's REFACTOR stage) and `plan`. `review` is the static review of test
 * quality after RED; `commit` a checkpoint.
 */
export type TaskStage =
  'plan' | 'red' | 'red_fix' | 'review' | 'green' | 'verify' | 'fix' | 're_verify' | 'refactor' | 'commit';

const PIPELINE_STAGES: Partial<Record<StageName, TaskStage>> = {
  PLAN: 'plan',
  RED: 'red',
  RED_FIX: 'red_fix',
  GREEN: 'green',
  VERIFY: 'verify',
  FIX: 'fix',
  RE_VERIFY: 're_verify',
  REVIEW_TESTS: 'review',
  REFACTOR: 'refactor',
};

/** The stored name of a TDD pipeline stage; undefined for stages of other workflows. */
export function taskStageOf(stage: StageName): TaskStage | undefined {
  return PIPELINE_STAGES[stage];
}
