import type { TaskStage, TaskStatus } from '../core/tasks.js';

/**
 * The ledger's tasks part (`Ledger.tasks`): the tasks of a `tasks` run, each attempt of each of
 * their stages, and each of their model calls. Workers on other machines stream their rows back
 * through the queue, and a stream can be replayed (a job retried after its worker died, a
 * coordinator resumed after a kill), so every write is idempotent by the row's identity.
 */

/** A task as the tasks file defines it (see `workflows/tasks/tasks-file.ts`). */
export interface NewTask {
  key: string;
  title: string;
  goal: string;
  acceptanceCriteria: readonly string[];
  testFile: string;
  implFile: string;
  dependsOn: readonly string[];
  exports: readonly string[];
}

export interface TaskRow extends NewTask {
  runId: string;
  /** Position in the tasks file, from 0. */
  position: number;
  status: TaskStatus;
  /** Attempts of the whole task started (a conflicting or red merge re-runs it as the next). */
  attempts: number;
  /** The branch its last attempt worked on. */
  branch: string | null;
  /** The run branch's commit after its merge. */
  mergeCommit: string | null;
  /** Why it failed, is blocked or was skipped. */
  reason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface TaskPatch {
  status?: TaskStatus;
  attempts?: number;
  branch?: string | null;
  mergeCommit?: string | null;
  /** Null clears it. */
  reason?: string | null;
}

/**
 * One attempt of one stage of a task. Identity: run, task, task attempt, stage and attempt
 * number. Record it when it starts (`success` left out) and again when it ends.
 */
export interface TaskAttemptRecord {
  runId: string;
  taskKey: string;
  /** The attempt of the whole task (default 1). */
  taskAttempt?: number;
  stage: TaskStage;
  attemptNumber: number;
  /** The worker that ran it. */
  worker?: string | null;
  /** sha256 prefix of the prompt sent, to tell identical retries apart. */
  promptHash?: string | null;
  startedAt: string;
  completedAt?: string | null;
  durationMs?: number | null;
  /** Undefined or null: still open. */
  success?: boolean | null;
  errorMessage?: string | null;
}

export interface TaskAttemptRow {
  id: number;
  runId: string;
  taskKey: string;
  taskAttempt: number;
  stage: TaskStage;
  attemptNumber: number;
  worker: string | null;
  promptHash: string | null;
  startedAt: string;
  completedAt: string | null;
  durationMs: number | null;
  /** Null while open (or cut off by a crash). */
  success: boolean | null;
  errorMessage: string | null;
}

/**
 * One model call of a task. Identity: run, task, task attempt, delivery (which start of the
 * task's job made it) and `seq` (its number within that delivery).
 */
export interface TaskInvocationRecord {
  runId: string;
  taskKey: string;
  taskAttempt?: number;
  delivery?: number;
  seq: number;
  /** The pipeline stage, free text as in the seed (`invocations.stage` has no CHECK). */
  stage: string;
  worker?: string | null;
  model?: string | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  durationMs?: number | null;
  createdAt: string;
}

export interface TaskInvocationRow {
  id: number;
  runId: string;
  taskKey: string;
  taskAttempt: number;
  delivery: number;
  seq: number;
  stage: string;
  worker: string | null;
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  durationMs: number | null;
  createdAt: string;
}

export interface TaskLedger {
  /**
   * Records a run's tasks, in file order, as `pending`. A task already recorded for the run is
   * left as it is, so a resumed run can record its tasks file again.
   */
  addTasks(runId: string, tasks: readonly NewTask[]): Promise<void>;
  /** Changes a task; throws `not-found` when the run has no such task. */
  updateTask(runId: string, key: string, patch: TaskPatch): Promise<TaskRow>;
  /** The run's tasks in file order. */
  tasks(runId: string): Promise<TaskRow[]>;
  getTask(runId: string, key: string): Promise<TaskRow | undefined>;
  /**
   * Records a stage attempt's start or end. A repeat of the same attempt updates its row; an
   * ended attempt is never reopened by its start arriving again.
   */
  recordAttempt(attempt: TaskAttemptRecord): Promise<void>;
  /** Stage attempts of the run (of one task when `taskKey` is given), in the order first recorded. */
  attempts(runId: string, taskKey?: string): Promise<TaskAttemptRow[]>;
  /** Records a model call of a task; the same call arriving again is ignored. */
  recordInvocation(invocation: TaskInvocationRecord): Promise<void>;
  /** Model calls of the run (of one task when `taskKey` is given), in the order recorded. */
  invocations(runId: string, taskKey?: string): Promise<TaskInvocationRow[]>;
}
