import { Git } from '../git/git.js';
import type { Ledger, RunRow } from '../ledger/types.js';
import { asGitRun, type GitRun } from './git-run.js';
import { rollbacksOf } from './rollbacks.js';

/** The other runs a `ratchet refactor rollback` of a run would touch, besides the run itself. */
export interface RollbackChain {
  /**
   * Accepted runs whose changes reached the branch after the run's backup was taken: restoring
   * the backup undoes them too. Newest first.
   */
  undone: GitRun[];
  /**
   * Runs that were accepted before the run's backup was taken and rolled back since: the backup
   * holds their changes, so restoring it brings them back. Newest first, with their latest
   * rollback's time.
   */
  revived: Array<{ run: GitRun; rolledBackAt: string }>;
}

/**
 * What else restoring `run`'s backup does to the runs of the same repository and branch (runs
 * that started from another branch are left alone: a rollback resets only the run's branch).
 * Read from git when the runs' commits are still there: a run is on the branch when the commit
 * it was accepted at is reachable from the branch, and in the backup when it is reachable from
 * the commit the run started from (the backup's). Without them (an older ledger, commits that
 * git collected), from the times: a run accepted and started after this one is undone; one
 * started before it and rolled back after it started comes back.
 *
 * A directory that is not a git repository has one copy, and one ledger, per run: nothing is
 * known there of its other runs, and the chain is empty.
 */
export async function rollbackChain(
  ledger: Ledger,
  run: GitRun,
  target: { dir: string; isGit: boolean },
): Promise<RollbackChain> {
  if (!target.isGit) return { undone: [], revived: [] };
  const git = new Git(target.dir);
  const tip = await git.revParse(run.baseBranch ? `refs/heads/${run.baseBranch}` : 'HEAD');
  const reaches = async (commit: string, descendant: string | null): Promise<boolean | null> => {
    if (descendant === null) return null;
    try {
      return await git.isAncestor(commit, descendant);
    } catch {
      return null;
    }
  };
  const undone: GitRun[] = [];
  const revived: RollbackChain['revived'] = [];
  for (const row of await ledger.listRuns(100_000)) {
    if (row.id === run.id || row.baseBranch !== run.baseBranch || !isGitRunRow(row)) continue;
    const other = asGitRun(row);
    // An accepted run without a commit of its own changed nothing on the branch.
    const final = other.finalCommit !== null && other.finalCommit !== other.baseCommit ? other.finalCommit : null;
    if (other.status === 'accepted') {
      const onBranch = final === null ? null : await reaches(final, tip);
      const inBackup = final === null ? null : await reaches(final, run.baseCommit);
      const isUndone =
        onBranch !== null && inBackup !== null
          ? onBranch && !inBackup
          : other.finalCommit !== other.baseCommit && startedAfter(other, run);
      if (isUndone) undone.push(other);
    } else if (other.status === 'rolled-back') {
      const rollbacks = await rollbacksOf(ledger, other.id);
      const wasAccepted = rollbacks.some((event) => event.previousStatus === 'accepted');
      const last = rollbacks.at(-1);
      if (!wasAccepted || !last) continue;
      const inBackup = final === null ? null : await reaches(final, run.baseCommit);
      // Changes already back on the branch (an earlier restore brought them) are not brought back.
      const onBranch = final === null ? null : await reaches(final, tip);
      const first = rollbacks[0]?.timestamp ?? last.timestamp;
      const isRevived =
        inBackup !== null && onBranch !== null
          ? inBackup && !onBranch
          : startedAfter(run, other) && first > run.createdAt;
      if (isRevived) revived.push({ run: other, rolledBackAt: last.timestamp });
    }
  }
  return { undone, revived };
}

/** A run of a git repository (every workflow's run has a branch, base commit and worktree). */
function isGitRunRow(row: RunRow): boolean {
  return row.branch !== null && row.baseCommit !== null && row.worktree !== null;
}

/** Whether `later` started after `earlier` (ledger order: creation time, then id). */
function startedAfter(later: RunRow, earlier: RunRow): boolean {
  return later.createdAt === earlier.createdAt ? later.id > earlier.id : later.createdAt > earlier.createdAt;
}
