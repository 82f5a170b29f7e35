import type { RatchetEvent } from '../core/events.js';
import { taskStageOf } from '../core/tasks.js';
import type { Ledger } from '../ledger/types.js';

/**
 * The tasks part of the recording seam: what a tasks run's events say about its tasks goes into
 * the ledger's `tasks`, `task_attempts` and `task_invocations` beside the event itself. Every
 * write is idempotent by the row's identity, so an event recorded again (a resumed run) is harmless.
 * `invocationSeq` numbers a task attempt's model calls.
 */
export function createTaskRecords(ledger: Ledger): (event: RatchetEvent) => Promise<void> {
  const invocations = new Map<string, number>();
  const taskAttempts = new Map<string, number>();
  return async (event) => {
    if (event.type === 'tasks-plan') return ledger.tasks.addTasks(event.runId, event.tasks);
    if (event.type === 'task-update') {
      taskAttempts.set(event.task, event.attempt);
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
      const counter = `${key}/${taskAttempt}`;
      const seq = (invocations.get(counter) ?? 0) + 1;
      invocations.set(counter, seq);
      await ledger.tasks.recordInvocation({
        runId: event.runId,
        taskKey: key,
        taskAttempt,
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
