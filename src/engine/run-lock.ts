import type { Clock } from '../core/effects.js';
import { Git } from '../git/git.js';
import { acquireRepoLock } from '../git/repo-lock.js';
import type { Ledger } from '../ledger/types.js';
import type { GitRun } from './git-run.js';
import { clearStaleGitLocks, recordGitLockRemoval } from './stale-locks.js';

/**
 * Runs `work` holding the repository lock, after removing the stale git lock files of the run
 * (see `clearStaleGitLocks`; the removal is recorded in the ledger). `removedLocks` lists them.
 */
export async function withRunLocked<T extends object>(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  clock: Clock,
  work: () => Promise<T>,
): Promise<T & { removedLocks: string[] }> {
  const lock = await acquireRepoLock(await new Git(repoRoot).commonDir(), { runId: run.id });
  try {
    const removedLocks = await clearStaleGitLocks(repoRoot, run);
    await recordGitLockRemoval(ledger, run, removedLocks, clock);
    return { ...(await work()), removedLocks };
  } finally {
    await lock.release();
  }
}
