import pc from 'picocolors';
import type { GitRun } from '../../engine/git-run.js';
import { RatchetError } from '../../core/errors.js';
import { rollbackChain } from '../../engine/rollback-chain.js';
import type { WorkflowRegistry } from '../../engine/registry.js';
import { acceptRun } from '../../engine/verbs/accept-run.js';
import { rejectRun } from '../../engine/verbs/reject-run.js';
import type { Ledger } from '../../ledger/types.js';
import type { Output } from '../output.js';
import { gitLockRemoveLine } from '../reporters/plain-reporter.js';

/** `ratchet accept`: from the command, or from the question at the end of `ratchet refactor run`. */
export async function acceptAndReport(
  output: Output,
  repoRoot: string,
  run: GitRun,
  context: { ledger: Ledger; registry: WorkflowRegistry },
  options: { force: boolean },
): Promise<void> {
  const { ledger } = context;
  // A branch started from the changes of a run rolled back since would bring them back.
  const { revived } = await rollbackChain(ledger, run, { dir: repoRoot, isGit: true });
  const names = revived.map(({ run: other, rolledBackAt }) => `run ${other.id} (rolled back at ${rolledBackAt})`);
  if (revived.length > 0 && !options.force)
    throw new RatchetError(
      'usage',
      `Accepting run ${run.id} would bring back the changes of ${names.join(' and ')}: its branch started from them.`,
      {
        hint: `Reject it and start again from ${run.baseBranch ?? 'your branch'} as it is now, or pass --force to accept it with those changes.`,
      },
    );
  const result = await acceptRun(repoRoot, run, context, options);
  if (revived.length > 0 && !output.json)
    output.err(pc.yellow(`Warning: the changes of ${names.join(' and ')} are back on ${run.baseBranch ?? 'HEAD'}.`));
  // `unverified` only when there is something to say (a refactor run accepted with --force).
  const { unverified, keptBranches, ...accepted } = result;
  if (output.json)
    output.out(
      JSON.stringify({
        run: run.id,
        ...accepted,
        ...(unverified.length > 0 ? { unverified } : {}),
        ...(keptBranches.length > 0 ? { keptBranches } : {}),
      }),
    );
  else {
    if (result.removedLocks.length > 0) output.out(pc.yellow(gitLockRemoveLine(result.removedLocks)));
    output.out(
      `Accepted run ${pc.cyan(run.id)} into ${run.baseBranch ?? 'HEAD'} (${result.mode}, now ${pc.yellow(result.commit.slice(0, 8))}).`,
    );
    if (result.copiedTo) output.out(`Its changes were also copied into ${result.copiedTo} (not a git repository).`);
    if (keptBranches.length > 0)
      output.out(
        `Kept ${keptBranches.length === 1 ? 'the branch' : `${keptBranches.length} branches`} of work the run never merged (git branch -D when done with ${keptBranches.length === 1 ? 'it' : 'them'}): ${keptBranches.join(', ')}`,
      );
    if (unverified.length > 0)
      output.err(
        pc.yellow(
          `Warning: ${unverified.length === 1 ? 'this checkpoint' : `these ${unverified.length} checkpoints`} passed only the fast verifier (the run stopped before the full verifier ran on ${unverified.length === 1 ? 'it' : 'them'}); run your full test suite:\n${unverified.map((subject) => `  ${subject}`).join('\n')}`,
        ),
      );
  }
}

/** `ratchet reject`: from the command, or from the question at the end of `ratchet refactor run`. */
export async function rejectAndReport(
  output: Output,
  repoRoot: string,
  run: GitRun,
  context: { ledger: Ledger; registry: WorkflowRegistry },
): Promise<void> {
  const { removedLocks } = await rejectRun(repoRoot, run, context);
  if (output.json) output.out(JSON.stringify({ run: run.id, status: 'rejected', removedLocks }));
  else {
    if (removedLocks.length > 0) output.out(pc.yellow(gitLockRemoveLine(removedLocks)));
    output.out(`Rejected run ${pc.cyan(run.id)}: worktree and branch ${run.branch} removed.`);
  }
}
