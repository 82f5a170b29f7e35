import type { RatchetEvent } from '../core/events.js';
import { taskStageOf } from '../core/tasks.js';
import type { Ledger } from '../ledger/types.js';

/**
 * The tasks part of the recording seam: what a tasks run's events say about its tasks goes into
 * the ledger's `tasks`, `task_attempts` and `task_invocations` beside the event itself. Every
 * write is idempotent by the row's identity, so an event recorded again (a resumed run) is harmless.
 * A model call is numbered within its task attempt's delivery (a job started again on another
 * worker numbers its calls from 1 again); stage attempts and calls carry the worker that ran them.
 */
export function createTaskRecords(ledger: Ledger): (event: RatchetEvent) => Promise<void> {
  const invocations = new Map<string, number>();
  const taskAttempts = new Map<string, number>();
  // Where each task runs now: its worker, and the start of its queue job (1 in the local pool).
  const placement = new Map<string, { worker: string | null; delivery: number }>();
  return async (event) => {
    if (event.type === 'tasks-plan') return ledger.tasks.addTasks(event.runId, event.tasks);
    if (event.type === 'task-update') {
      taskAttempts.set(event.task, event.attempt);
      if (event.status === 'running')
        placement.set(event.task, { worker: event.worker ?? null, delivery: event.delivery ?? 1 });
      await ledger.tasks.updateTask(event.runId, event.task, {
        status: event.status,
        attempts: event.attempt,
        ...(event.branch === undefined ? {} : { branch: event.branch }),
        ...(event.mergeCommit === undefined ? {} : { mergeCommit: event.mergeCommit }),
        reason: event.reason ?? null,
      });
      return;
    }
    const key = event.task;
    if (key === undefined) return;
    const taskAttempt = taskAttempts.get(key) ?? 1;
    const { worker, delivery } = placement.get(key) ?? { worker: null, delivery: 1 };
    if (event.type === 'stage-start' || event.type === 'stage-end') {
      const stage = taskStageOf(event.stage);
      if (stage === undefined) return;
      const ended = event.type === 'stage-end';
      await ledger.tasks.recordAttempt({
        runId: event.runId,
        taskKey: key,
        taskAttempt,
        stage,
        // Cycles number a task's stages too: attempt numbers restart in each cycle.
        attemptNumber: event.cycle * 1000 + event.attempt,
        worker,
        startedAt: event.timestamp,
        ...(ended
          ? {
              completedAt: event.timestamp,
              success: event.outcome === 'accepted',
              errorMessage: event.outcome === 'accepted' ? null : (event.reason ?? event.outcome),
            }
          : {}),
      });
      return;
    }
    if (event.type === 'model-call') {
      const counter = `${key}/${taskAttempt}/${delivery}`;
      const seq = (invocations.get(counter) ?? 0) + 1;
      invocations.set(counter, seq);
      await ledger.tasks.recordInvocation({
        runId: event.runId,
        taskKey: key,
        taskAttempt,
        delivery,
        worker,
        seq,
        stage: event.stage ?? 'unknown',
        model: event.model,
        inputTokens: event.response?.usage.inputTokens ?? null,
        outputTokens: event.response?.usage.outputTokens ?? null,
        durationMs: event.latencyMs,
        createdAt: event.timestamp,
      });
    }
  };
}
