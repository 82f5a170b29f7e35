import { existsSync } from 'node:fs';
import { RatchetError } from '../../core/errors.js';
import { NOTES_REF, parseNote, type HandoffState } from '../../core/handoff.js';
import { Git } from '../../git/git.js';
import type { Ledger, RunRow } from '../../ledger/types.js';
import type { AnyWorkflow } from '../../workflows/definition.js';
import { systemClock } from '../effects.js';
import { isClosed, type GitRun } from '../git-run.js';
import { readRunConfig } from '../run-config.js';
import { withRunLocked } from '../run-lock.js';
import { rolledBackError } from '../rollbacks.js';
import { restoreCommandOf } from './reject-run.js';
import type { RunVerbContext } from './verb-context.js';

/**
 * `ratchet rollback <commit>`: moves the run back to one of its checkpoints (a TDD run is
 * resumable from there; a refactor run can then be accepted with `--force` up to there). Holds
 * the repository lock, so it waits for no run and refuses while one is active.
 */
export async function rollbackRun(
  repoRoot: string,
  run: GitRun,
  target: string,
  context: RunVerbContext,
): Promise<{ commit: string; state: HandoffState | null; removedLocks: string[] }> {
  const { ledger } = context;
  // A checkpoint of another run (an older one, when no run was named): say whose it is.
  const owner = await otherRunWithCheckpoint(repoRoot, run, target, ledger);
  if (owner !== null) {
    throw new RatchetError(
      'usage',
      `${target} is not a checkpoint of run ${run.id}: it is a checkpoint of run ${owner.id}${isClosed(owner) ? `, which was ${owner.status}` : ''}.`,
      {
        hint: isClosed(owner)
          ? `Run ${owner.id} is over: there is nothing of it left to roll back (\`ratchet history ${owner.id}\` shows its checkpoints).`
          : `Pass that run: \`ratchet rollback ${target} --run ${owner.id}\`.`,
      },
    );
  }
  if (run.status === 'accepted') {
    const restore = restoreCommandOf(context.registry, run);
    throw new RatchetError(
      'usage',
      `Run ${run.id} was accepted: its commits are on ${run.baseBranch ?? 'your branch'}.`,
      {
        hint:
          restore !== null
            ? `Undo it with \`${restore} ${run.id}\` (restores the repository from the run's backup).`
            : 'Undo it with git (git revert, or git reset on your branch).',
      },
    );
  }
  if (run.status === 'rolled-back')
    throw await rolledBackError(ledger, run, 'there is nothing left to roll back to a checkpoint');
  if (run.status === 'rejected')
    throw new RatchetError('usage', `Run ${run.id} was rejected: there is nothing left to roll back.`);
  if (!existsSync(run.worktree))
    throw new RatchetError('not-found', `The worktree of run ${run.id} is gone (${run.worktree}).`);
  // The target is checked first (read-only): a bad one changes nothing, stale locks included.
  const checked = await rollbackTarget(run, target, readRunConfig(context.registry, run).workflow);
  return withRunLocked(repoRoot, run, ledger, context.clock ?? systemClock, async () => {
    const git = new Git(run.worktree);
    await git.resetHard(checked.commit);
    await git.clean();
    await ledger.updateRun(run.id, { status: 'interrupted' });
    return checked;
  });
}

/**
 * The run whose checkpoint `target` is, when that is a run other than `run` (looked up in the
 * ledger's checkpoints of every run); null when `target` is `run`'s own, names no commit, or is
 * no run's checkpoint.
 */
async function otherRunWithCheckpoint(
  repoRoot: string,
  run: GitRun,
  target: string,
  ledger: Ledger,
): Promise<RunRow | null> {
  if (target === run.id || target.startsWith('-')) return null;
  const commit = await new Git(repoRoot).revParse(`${target}^{commit}`).catch(() => null);
  if (commit === null) return null;
  const isCheckpointOf = async (id: string): Promise<boolean> =>
    (await ledger.checkpoints(id)).some((checkpoint) => checkpoint.commitSha === commit);
  if (await isCheckpointOf(run.id)) return null;
  for (const other of await ledger.listRuns(10_000)) {
    if (other.id !== run.id && (await isCheckpointOf(other.id))) return other;
  }
  return null;
}

/** The commit `target` names, when it is the run's base or one of its checkpoints, with its handoff state. */
async function rollbackTarget(
  run: GitRun,
  target: string,
  workflow: AnyWorkflow,
): Promise<{ commit: string; state: HandoffState | null }> {
  const git = new Git(run.worktree);
  const commit = target === run.id ? run.baseCommit : await git.revParse(`${target}^{commit}`);
  if (!commit) throw new RatchetError('usage', `${target} is not a commit.`);
  const inRun =
    commit === run.baseCommit ||
    ((await git.isAncestor(run.baseCommit, commit)) && (await git.isAncestor(commit, 'HEAD')));
  if (!inRun)
    throw new RatchetError('usage', `${target} is not a checkpoint of run ${run.id}.`, {
      hint: 'See `ratchet history` for its checkpoints.',
    });
  const note = commit === run.baseCommit ? { state: null } : parseNote(await git.readNote(NOTES_REF, commit));
  // A run that is resumed continues from the note; the checkpoints of the others need none.
  if (workflow.resume !== undefined && commit !== run.baseCommit && note.state === null) {
    throw new RatchetError('usage', `${target} has no handoff note, so the run cannot resume from it.`, {
      hint: 'Pick a commit listed by `ratchet history`.',
    });
  }
  return { commit, state: note.state };
}
