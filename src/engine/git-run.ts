import { RatchetError } from '../core/errors.js';
import type { RunRow } from '../ledger/types.js';

/** A ledger run that works on a git branch in a worktree (every workflow run does). */
export interface GitRun extends RunRow {
  branch: string;
  baseCommit: string;
  worktree: string;
}

export function asGitRun(run: RunRow): GitRun {
  const { branch, baseCommit, worktree } = run;
  if (branch === null || baseCommit === null || worktree === null) {
    throw new RatchetError('internal', `Run ${run.id} has no branch, base commit or worktree in the ledger.`);
  }
  return { ...run, branch, baseCommit, worktree };
}

/**
 * Accepted, rejected or rolled back (`ratchet refactor rollback`): the run is over, and its
 * worktree and branch are gone (removed then).
 */
export function isClosed(run: Pick<RunRow, 'status'>): boolean {
  return run.status === 'accepted' || run.status === 'rejected' || run.status === 'rolled-back';
}
