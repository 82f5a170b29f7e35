import { RatchetError } from '../../core/errors.js';
import type { TaskStatus } from '../../core/tasks.js';
import type { Ledger } from '../../ledger/types.js';
import type { TaskRow } from '../../ledger/task-types.js';
import { dependentsOf } from '../../workflows/tasks/task-graph.js';

/** The run must be a tasks run that is not over (accepted, rejected, rolled back, or completed). */
async function tasksOf(ledger: Ledger, runId: string, key: string): Promise<TaskRow[]> {
  const run = await ledger.getRun(runId);
  if (run?.workflow !== 'tasks')
    throw new RatchetError('usage', `Run ${runId} is not a tasks run.`, {
      hint: 'Pass the id of a `ratchet tasks run` run (`ratchet history` lists them).',
    });
  if (!['partial', 'failed', 'interrupted', 'running'].includes(run.status))
    throw new RatchetError('usage', `Run ${runId} is ${run.status}: its tasks can no longer change.`);
  const rows = await ledger.tasks.tasks(runId);
  if (!rows.some((row) => row.key === key))
    throw new RatchetError('not-found', `Run ${runId} has no task ${key}.`, {
      hint: `Its tasks: ${rows.map((row) => row.key).join(', ')}.`,
    });
  return rows;
}

/** Dependents of `key` that were blocked wait again (resume blocks those another failure still holds). */
async function unblockDependents(
  ledger: Ledger,
  runId: string,
  rows: readonly TaskRow[],
  key: string,
): Promise<string[]> {
  const freed: string[] = [];
  for (const dependent of dependentsOf(rows, key)) {
    const row = rows.find((candidate) => candidate.key === dependent);
    if (row?.status !== 'blocked') continue;
    await ledger.tasks.updateTask(runId, dependent, { status: 'pending', reason: null });
    freed.push(dependent);
  }
  return freed;
}

async function decide(
  ledger: Ledger,
  runId: string,
  key: string,
  allowed: readonly TaskStatus[],
  to: TaskStatus,
): Promise<{ task: TaskRow; freed: string[] }> {
  const rows = await tasksOf(ledger, runId, key);
  const row = rows.find((candidate) => candidate.key === key);
  if (row === undefined || !allowed.includes(row.status))
    throw new RatchetError(
      'usage',
      `Task ${key} is ${row?.status ?? 'unknown'}; only a ${allowed.join(' or ')} task can be ${to === 'skipped' ? 'skipped' : 'retried'}.`,
    );
  const task = await ledger.tasks.updateTask(runId, key, {
    status: to,
    reason: to === 'skipped' ? 'skipped by the user' : null,
  });
  return { task, freed: await unblockDependents(ledger, runId, rows, key) };
}

/**
 * `ratchet tasks retry <task>`: a failed or blocked task waits to run again (as its next attempt,
 * on the run branch as it is then), and so do the dependents it blocked; `ratchet resume` runs them.
 */
export function retryTask(ledger: Ledger, runId: string, key: string): Promise<{ task: TaskRow; freed: string[] }> {
  return decide(ledger, runId, key, ['failed', 'blocked'], 'pending');
}

/**
 * `ratchet tasks skip <task>`: the task will not run; its dependents run as if it had merged
 * (seed 000: the user takes responsibility for what it would have provided).
 */
export function skipTask(ledger: Ledger, runId: string, key: string): Promise<{ task: TaskRow; freed: string[] }> {
  return decide(ledger, runId, key, ['pending', 'failed', 'blocked'], 'skipped');
}
