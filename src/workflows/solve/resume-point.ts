import { RatchetError } from '../../core/errors.js';
import type { Git } from '../../git/git.js';
import type { ResumePoint } from '../definition.js';
import { SOLVE_NOTES_REF } from './git-workspace.js';
import { SolveProgressSchema, type SolveProgress } from './progress.js';

/** A solve run, as far as its progress notes go. */
interface RunOfNotes {
  id: string;
  baseCommit: string;
}

/**
 * Where a stopped solve run continues: the newest commit on its branch with a progress note
 * (`SOLVE_NOTES_REF`); commits after it never became checkpoints and are dropped. With none, the
 * run starts over from its base commit. A note that does not parse is refused: resuming would
 * redo or skip steps. Checkpoints a kill left out of the ledger are not recorded again (the
 * progress note, not the ledger, is what the run continues from).
 */
export async function findSolveResumePoint(git: Git, run: RunOfNotes): Promise<ResumePoint> {
  const commits = await git.log(`${run.baseCommit}..HEAD`);
  let dropped = 0;
  for (const entry of commits) {
    const progress = await progressAt(git, entry.sha, run);
    if (progress !== null) return { commit: entry.sha, note: null, dropped, checkpoints: [] };
    dropped++;
  }
  return { commit: run.baseCommit, note: null, dropped, checkpoints: [] };
}

/** The progress kept with `commit` (null at a commit without one, such as the run's base). */
export async function solveStateAt(git: Git, commit: string): Promise<SolveProgress | null> {
  return progressAt(git, commit, null);
}

async function progressAt(git: Git, commit: string, run: RunOfNotes | null): Promise<SolveProgress | null> {
  const text = await git.readNote(SOLVE_NOTES_REF, commit).catch(() => null);
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = SolveProgressSchema.safeParse(json);
  if (!parsed.success) {
    throw new RatchetError('usage', `The solve progress note on ${commit.slice(0, 8)} cannot be read.`, {
      hint: `Roll the run back to an earlier checkpoint (ratchet history${run ? ` ${run.id}` : ''}, then ratchet rollback <commit>), or reject it.`,
    });
  }
  return parsed.data;
}
