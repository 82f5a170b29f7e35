import { RatchetError } from '../../core/errors.js';
import type { SolvePassStage } from '../../core/stages.js';
import type { Git } from '../../git/git.js';
import type { ProgressCheckpoint, ResumePoint } from '../definition.js';
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
 * redo or skip steps. Every checkpoint up to it is returned (oldest first) with the stage that
 * made it, for `resume` to record those a kill left out of the ledger (killed between the commit
 * and its `checkpoint-create`); the progress note, not the ledger, is what the run continues
 * from, so none is made again.
 */
export async function findSolveResumePoint(git: Git, run: RunOfNotes): Promise<ResumePoint> {
  const commits = await git.log(`${run.baseCommit}..HEAD`);
  let dropped = 0;
  for (const [index, entry] of commits.entries()) {
    const progress = await progressAt(git, entry.sha, run);
    if (progress === null) {
      dropped++;
      continue;
    }
    return {
      commit: entry.sha,
      note: null,
      dropped,
      checkpoints: await checkpointsUpTo(git, run, commits.slice(index)),
    };
  }
  return { commit: run.baseCommit, note: null, dropped, checkpoints: [] };
}

/** The checkpoints among `commits` (newest first, the resume point first), oldest first with their stages. */
async function checkpointsUpTo(
  git: Git,
  run: RunOfNotes,
  commits: readonly { sha: string; subject: string }[],
): Promise<ProgressCheckpoint[]> {
  const noted: { sha: string; subject: string; progress: SolveProgress }[] = [];
  for (const commit of [...commits].reverse()) {
    const progress = await progressAt(git, commit.sha, run);
    if (progress !== null) noted.push({ ...commit, progress });
  }
  return noted.map(({ sha, subject, progress }, index) => ({
    sha,
    subject,
    note: null,
    stage: stageOfCheckpoint(noted[index - 1]?.progress ?? null, progress),
    phase: 'SOLVE',
  }));
}

/**
 * The pass that made a checkpoint, from what its progress adds to the one before: the meta plan
 * (META_PLAN), a part's plan or its failure (PART_PLAN), else a step (IMPLEMENT; a single-pass
 * run's one checkpoint too).
 */
function stageOfCheckpoint(before: SolveProgress | null, after: SolveProgress): SolvePassStage {
  if (after.metaPlan !== null && (before?.metaPlan ?? null) === null) return 'META_PLAN';
  const parts = (progress: SolveProgress | null): number =>
    progress === null ? 0 : Object.keys(progress.partPlans).length + progress.partsFailed.length;
  if (after.steps.length === (before?.steps.length ?? 0) && parts(after) > parts(before)) return 'PART_PLAN';
  return 'IMPLEMENT';
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
