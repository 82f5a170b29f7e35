import { RatchetError } from '../../core/errors.js';
import { NOTES_REF } from '../../core/handoff.js';
import { Git } from '../../git/git.js';
import type { Ledger } from '../../ledger/types.js';
import { checkpointsOf, ledgerNotes } from '../checkpoints.js';
import { systemClock } from '../effects.js';
import { isClosed, type GitRun } from '../git-run.js';
import { withRunLocked } from '../run-lock.js';
import { rolledBackError } from '../rollbacks.js';
import type { RunVerbContext } from './verb-context.js';

/**
 * `ratchet repair-notes`: makes the handoff notes readable again. A notes ref that no longer
 * points at a commit is moved aside; every checkpoint of the run gets its note back from the
 * ledger (which recorded each note it wrote); notes that cannot be parsed are replaced.
 */
export async function repairNotes(
  repoRoot: string,
  run: GitRun,
  context: RunVerbContext,
): Promise<{ movedAside: string | null; rewritten: number; removedLocks: string[] }> {
  const { ledger } = context;
  // A run that is over has no branch left: its notes are not written back onto its old commits
  // (`reject` removed them on purpose; `history` still shows them, from the ledger).
  if (run.status === 'rolled-back')
    throw await rolledBackError(ledger, run, 'there are no handoff notes of it left to repair');
  if (isClosed(run))
    throw new RatchetError(
      'usage',
      `Run ${run.id} was ${run.status === 'accepted' ? `accepted into ${run.baseBranch ?? 'your branch'}` : 'rejected'}: it is over and its branch ${run.branch} is gone, so there are no handoff notes of it to repair.`,
      {
        hint: `\`ratchet history ${run.id}\` shows its handoff notes (from the ledger where git has none). repair-notes repairs those of a run that can still be resumed.`,
      },
    );
  return withRunLocked(repoRoot, run, ledger, context.clock ?? systemClock, () =>
    repairNotesLocked(repoRoot, run, ledger),
  );
}

async function repairNotesLocked(
  repoRoot: string,
  run: GitRun,
  ledger: Ledger,
): Promise<{ movedAside: string | null; rewritten: number }> {
  const git = new Git(repoRoot);
  let movedAside: string | null = null;
  const ref = await git.revParse(NOTES_REF);
  if (ref !== null && (await git.revParse(`${NOTES_REF}^{commit}`)) === null) {
    movedAside = `${NOTES_REF}-broken-${Date.now()}`;
    await git.updateRef(movedAside, ref);
    await git.deleteRef(NOTES_REF);
  }
  const written = await ledgerNotes(ledger, run.id);
  let rewritten = 0;
  for (const checkpoint of await checkpointsOf(git, run)) {
    const known = written.get(checkpoint.sha);
    if (known && (checkpoint.state === null || checkpoint.noteError !== null)) {
      await git.writeNote(NOTES_REF, checkpoint.sha, `${JSON.stringify(known, null, 2)}\n`);
      rewritten++;
    } else if (!known && checkpoint.noteError !== null) {
      await git.removeNote(NOTES_REF, checkpoint.sha);
    }
  }
  return { movedAside, rewritten };
}
