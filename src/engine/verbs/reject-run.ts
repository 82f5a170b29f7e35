import { RatchetError } from '../../core/errors.js';
import { NOTES_REF } from '../../core/handoff.js';
import { Git } from '../../git/git.js';
import type { Ledger } from '../../ledger/types.js';
import { systemClock } from '../effects.js';
import type { GitRun } from '../git-run.js';
import { readRunConfig } from '../run-config.js';
import { withRunLocked } from '../run-lock.js';
import { rolledBackError } from '../rollbacks.js';
import { discardRunWorktree, discardSideBranches } from '../worktree-setup.js';
import type { RunVerbContext } from './verb-context.js';

/**
 * `ratchet reject`: removes the run's worktree and branch; the user's checkout was never touched.
 * Locked and cleaned like `acceptRun`.
 */
export async function rejectRun(
  repoRoot: string,
  run: GitRun,
  context: RunVerbContext,
): Promise<{ removedLocks: string[] }> {
  const { ledger } = context;
  if (run.status === 'accepted') {
    const restore = restoreCommandOf(context.registry, run);
    throw new RatchetError(
      'usage',
      `Run ${run.id} was already accepted into ${run.baseBranch ?? 'your branch'}; it cannot be rejected.`,
      {
        hint:
          restore !== null
            ? `Undo it with \`${restore} ${run.id}\`: it restores the repository from the run's backup, as it was before the run (the current state is backed up first).`
            : 'Undo it with git (git revert of its merge or commits).',
      },
    );
  }
  if (run.status === 'rolled-back')
    throw await rolledBackError(ledger, run, 'its worktree and branch are gone, so there is nothing to reject');
  if (run.status === 'rejected')
    throw new RatchetError(
      'usage',
      `Run ${run.id} was already rejected: its worktree and branch ${run.branch} were removed then.`,
    );
  return withRunLocked(repoRoot, run, ledger, context.clock ?? systemClock, async () => {
    await dropRun(repoRoot, run, ledger, null);
    return {};
  });
}

/**
 * Drops a run: its worktree and branch go, and with them the handoff notes of its commits (the
 * notes ref is shared by all runs). The ledger keeps it as `status`: `rejected` when the user
 * dropped it (`reject`, no or an interruption at the confirmation), `failed` (with `error`) when
 * a failure before its steps dropped it (a network error in a refactor run's planner, say): the
 * user rejected nothing then. The caller holds the repository lock.
 */
export async function dropRun(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
  error: string | null,
  status: 'rejected' | 'failed' = 'rejected',
): Promise<void> {
  const git = new Git(repoRoot);
  const tip = (await git.branchExists(run.branch)) ? await git.revParse(run.branch) : null;
  if (tip) {
    for (const commit of await git.log(`${run.baseCommit}..${tip}`)) await git.removeNote(NOTES_REF, commit.sha);
  }
  await discardRunWorktree(git, run.worktree, run.branch);
  await discardSideBranches(git, run, { notesRef: NOTES_REF });
  await ledger.updateRun(run.id, {
    status,
    ...(tip ? { finalCommit: tip } : {}),
    ...(error === null ? {} : { error }),
  });
}

/** The command that restores the run's backup; null unless its workflow made one and recorded it. */
export function restoreCommandOf(registry: RunVerbContext['registry'], run: GitRun): string | null {
  const { workflow, settings } = readRunConfig(registry, run);
  const backups = workflow.backups;
  return backups !== undefined && backups.of(settings) !== null ? backups.restoreCommand : null;
}
